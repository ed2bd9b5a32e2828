use super::*;

const PAGE: &str = "<html><head><title>T</title></head><body><p>Hello</p></body></html>";

/// A stand-in renderer in `dir`: a shell script that writes its pid to
/// `pid` beside it, then runs `body` (which must `exec` its last command,
/// so the script's pid is the only process it makes).
fn stand_in(dir: &std::path::Path, body: &str) -> std::path::PathBuf {
    let program = dir.join(RENDER_PAGE_PROGRAM);
    let script = format!(
        "#!/bin/sh\necho $$ > '{}'\n{body}\n",
        dir.join("pid").display()
    );
    std::fs::write(&program, script).unwrap();
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    program
}

/// The stand-in in `dir` ran and is gone: its pid names neither a process
/// that runs it nor a child of ours (running, or a zombie left unreaped).
fn assert_stand_in_gone(dir: &std::path::Path) {
    let pid = std::fs::read_to_string(dir.join("pid")).unwrap();
    let pid = pid.trim();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let program = dir.join(RENDER_PAGE_PROGRAM);
    let needle = program.as_os_str().as_encoded_bytes();
    assert!(
        !cmdline.windows(needle.len()).any(|w| w == needle),
        "the renderer {pid} is still running"
    );
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let parent = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(1))
        .and_then(|ppid| ppid.parse::<u32>().ok());
    assert_ne!(
        parent,
        Some(std::process::id()),
        "the renderer {pid} is our child still: not reaped"
    );
}

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
    let program = stand_in(dir.path(), "echo \"$1 $2\"\nexec cat");
    let big = format!("{PAGE}{}", "x".repeat(1 << 20));
    let text = PageRenderer::Helper(program)
        .render(&big, "https://example.com/a", PageFormat::Text)
        .unwrap();
    assert_eq!(text, format!("https://example.com/a text\n{big}"));
    assert_stand_in_gone(dir.path());
}

#[test]
fn the_renderer_gets_none_of_the_workers_environment() {
    let dir = tempfile::tempdir().unwrap();
    let program = stand_in(dir.path(), "exec /usr/bin/env");
    let text = PageRenderer::Helper(program)
        .render(PAGE, "https://example.com/", PageFormat::Text)
        .unwrap();
    // This process has both; the renderer must see neither.
    assert!(std::env::var_os("PATH").is_some() && std::env::var_os("HOME").is_some());
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("PATH=") || l.starts_with("HOME=")),
        "{text}"
    );
    assert_stand_in_gone(dir.path());
}

#[test]
fn a_renderer_that_fails_is_reported_with_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let program = stand_in(dir.path(), "echo 'cannot parse' >&2\nexit 3");
    let error = PageRenderer::Helper(program)
        .render(PAGE, "https://example.com/", PageFormat::Markdown)
        .unwrap_err()
        .to_string();
    assert!(error.contains("cannot parse"), "{error}");
    assert!(error.contains("exit status: 3"), "{error}");
    assert_stand_in_gone(dir.path());
}

#[test]
fn in_process_rendering_calls_the_function() {
    let text = PageRenderer::InProcess(crate::web::html_to_readable)
        .render(PAGE, "https://example.com/", PageFormat::Markdown)
        .unwrap();
    assert!(text.contains("Hello"), "{text}");
}
