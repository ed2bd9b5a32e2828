use super::*;

#[test]
fn a_short_page_without_an_article_is_converted_whole() {
    let html = r#"<html><head><title>Tiny</title><script>var x = 1;</script></head>
<body><h2>Links</h2><ul><li><a href="https://example.org/a">First</a></li></ul></body></html>"#;
    let markdown = html_to_readable(html, "https://example.org/", PageFormat::Markdown);
    assert!(markdown.starts_with("# Tiny\n\n"), "{markdown}");
    assert!(
        markdown.contains("[First](https://example.org/a)"),
        "{markdown}"
    );
    assert!(!markdown.contains("var x"), "{markdown}");
}

#[test]
fn text_format_has_no_markup() {
    let html = r#"<html><body><p>Hello <b>bold</b> <a href="/x">link</a></p></body></html>"#;
    let text = html_to_readable(html, "https://example.org/", PageFormat::Text);
    assert!(text.contains("Hello bold link"), "{text}");
    assert!(!text.contains('<') && !text.contains("]("), "{text}");
}

#[test]
fn plain_bodies_pass_through_unchanged() {
    let json = "{\"a\": \"<b>\"}";
    assert_eq!(
        render_page(
            json,
            BodyKind::Plain,
            "https://example.org/",
            PageFormat::Markdown
        ),
        json
    );
}

#[test]
fn a_format_is_found_by_its_name_as_serde_reads_it() {
    for format in [PageFormat::Markdown, PageFormat::Text] {
        let quoted = format!("\"{}\"", format.name());
        assert_eq!(serde_json::from_str::<PageFormat>(&quoted).unwrap(), format);
        assert_eq!(PageFormat::from_name(format.name()), Some(format));
    }
    assert_eq!(PageFormat::from_name("html"), None);
}
