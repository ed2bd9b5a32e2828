//! `subagent-render-page`, the helper that renders `scrape_webpage`'s HTML
//! pages for the worker: it renders as the in-process renderer does, and
//! the worker binary itself stays free of the HTML parser and its entity
//! tables (the memory and start time they cost every worker are why the
//! helper exists).

use std::io::Write;
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use subagent_tools::{PageFormat, html_to_readable};

use crate::support::binaries::binary;

const ARTICLE: &str = r#"<!doctype html><html><head><title>Otters</title></head><body>
<nav><a href="/home">Home</a></nav>
<article><h1>Otters</h1>
<p>Sea otters hold hands while they sleep so that they do not drift apart. This is called
rafting, and a group of otters floating together is called a raft &amp; they can stay like
this for hours, wrapped in kelp so that the current does not carry them off.</p>
<p>Read more in the <a href="/guide">field guide</a>, which lists every species and where it
lives, from the rivers of South America to the coasts of the North Pacific &mdash; all of them.</p>
</article></body></html>"#;

/// A name only the HTML parser's entity tables hold.
const ENTITY_NAME: &[u8] = b"DoubleLongLeftRightArrow";

fn render_with_helper(page: &str, url: &str, format: &str) -> (String, bool) {
    let mut child = Command::new(binary("subagent-render-page"))
        .args([url, format])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A helper that refuses its arguments exits without reading the page,
    // so the pipe may break under the write: its status says why.
    let written = child.stdin.take().unwrap().write_all(page.as_bytes());
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    // The helper starts no process of its own; it is reaped and gone.
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the page renderer {pid} is still there"
    );
    (String::from_utf8(out.stdout).unwrap(), out.status.success())
}

#[test]
fn the_helper_renders_a_page_as_the_in_process_renderer_does() {
    let url = "https://example.com/otters";
    for (arg, format) in [
        ("markdown", PageFormat::Markdown),
        ("text", PageFormat::Text),
    ] {
        let (text, ok) = render_with_helper(ARTICLE, url, arg);
        assert!(ok);
        assert_eq!(text, html_to_readable(ARTICLE, url, format));
        assert!(text.contains("Sea otters"), "{text}");
    }
}

#[test]
fn the_helper_refuses_an_unknown_format() {
    let (text, ok) = render_with_helper(ARTICLE, "https://example.com/", "html");
    assert!(!ok);
    assert_eq!(text, "");
}

#[test]
fn the_worker_binary_does_not_carry_the_html_parser() {
    let contains = |path: std::path::PathBuf| {
        std::fs::read(path)
            .unwrap()
            .windows(ENTITY_NAME.len())
            .any(|w| w == ENTITY_NAME)
    };
    assert!(
        contains(binary("subagent-render-page")),
        "the marker must come from the parser's tables"
    );
    assert!(
        !contains(binary("subagent-worker")),
        "subagent-worker links the HTML parser again: render pages through subagent-render-page"
    );
}
