use super::*;

const PAGE: &str = "<html><head><title>T</title></head><body><p>Hello</p></body></html>";

#[test]
fn a_missing_renderer_is_an_error_that_says_where_it_was_looked_for() {
    let missing = std::env::temp_dir()
        .join("no-such-dir-for-subagent")
        .join(RENDER_PAGE_PROGRAM);
    let error = PageRenderer::Helper(missing.clone())
        .render(PAGE, "https://example.com/", PageFormat::Markdown)
        .unwrap_err()
        .to_string();
    assert!(error.contains(&missing.display().to_string()), "{error}");
    assert!(error.contains("beside subagent-worker"), "{error}");
}

#[test]
fn the_renderer_gets_the_page_on_stdin_and_the_url_and_format_as_arguments() {
    // A stand-in renderer: echoes its arguments, then the page.
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join(RENDER_PAGE_PROGRAM);
    std::fs::write(&program, "#!/bin/sh\necho \"$1 $2\"\ncat\n").unwrap();
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let big = format!("{PAGE}{}", "x".repeat(1 << 20));
    let text = PageRenderer::Helper(program)
        .render(&big, "https://example.com/a", PageFormat::Text)
        .unwrap();
    assert_eq!(text, format!("https://example.com/a text\n{big}"));
}

#[test]
fn a_renderer_that_fails_is_reported_with_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join(RENDER_PAGE_PROGRAM);
    std::fs::write(&program, "#!/bin/sh\necho 'cannot parse' >&2\nexit 3\n").unwrap();
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let error = PageRenderer::Helper(program)
        .render(PAGE, "https://example.com/", PageFormat::Markdown)
        .unwrap_err()
        .to_string();
    assert!(error.contains("cannot parse"), "{error}");
    assert!(error.contains("exit status: 3"), "{error}");
}

#[test]
fn in_process_rendering_calls_the_function() {
    let text = PageRenderer::InProcess(crate::web::html_to_readable)
        .render(PAGE, "https://example.com/", PageFormat::Markdown)
        .unwrap();
    assert!(text.contains("Hello"), "{text}");
}
