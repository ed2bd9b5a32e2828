use super::*;

#[test]
fn content_type_is_split_into_type_and_charset() {
    assert_eq!(
        parse_content_type("Text/HTML; Charset=\"Shift_JIS\""),
        ("text/html".to_owned(), Some("Shift_JIS".to_owned()))
    );
    assert_eq!(
        parse_content_type("application/json"),
        ("application/json".to_owned(), None)
    );
}

#[test]
fn text_html_and_json_are_accepted_and_binary_types_are_not() {
    assert_eq!(body_kind("text/html"), Some(BodyKind::Html));
    assert_eq!(body_kind("application/xhtml+xml"), Some(BodyKind::Html));
    assert_eq!(body_kind("text/plain"), Some(BodyKind::Plain));
    assert_eq!(body_kind("text/markdown"), Some(BodyKind::Plain));
    assert_eq!(body_kind("application/json"), Some(BodyKind::Plain));
    assert_eq!(body_kind("application/ld+json"), Some(BodyKind::Plain));
    for refused in [
        "image/png",
        "application/pdf",
        "application/octet-stream",
        "video/mp4",
    ] {
        assert_eq!(body_kind(refused), None, "{refused}");
    }
}

#[test]
fn the_header_charset_decodes_windows_1252() {
    let bytes = b"caf\xe9 \x93quoted\x94";
    assert_eq!(
        decode_body(bytes, Some("windows-1252"), BodyKind::Plain),
        "caf\u{e9} \u{201c}quoted\u{201d}"
    );
}

#[test]
fn a_meta_charset_decodes_shift_jis_when_the_header_has_none() {
    let (encoded, _, _) = encoding_rs::SHIFT_JIS.encode("日本語のページ");
    let mut page = b"<html><head><meta charset=\"shift_jis\"></head><body>".to_vec();
    page.extend_from_slice(&encoded);
    page.extend_from_slice(b"</body></html>");
    let text = decode_body(&page, None, BodyKind::Html);
    assert!(text.contains("日本語のページ"), "{text}");
}

#[test]
fn a_bom_wins_over_the_declared_charset() {
    let bytes = b"\xef\xbb\xbfcaf\xc3\xa9";
    assert_eq!(
        decode_body(bytes, Some("windows-1252"), BodyKind::Plain),
        "caf\u{e9}"
    );
}

#[test]
fn invalid_utf8_is_replaced_not_refused() {
    assert_eq!(
        decode_body(b"ok \xff", None, BodyKind::Plain),
        "ok \u{fffd}"
    );
}
