//! The `subagent-render-page` program: turns one fetched HTML page into the
//! readable text `scrape_webpage` returns, for the worker, which does not
//! link the HTML parser (see [`super::render`]). Its binaries
//! (`crates/cli`'s, and the test suite's copy) are one line calling
//! [`main`].
//!
//! Usage: `subagent-render-page URL FORMAT` with the page (UTF-8) on stdin;
//! FORMAT is `markdown` or `text`. The text goes to stdout; a usage or input
//! error goes to stderr with exit status 2. It reads nothing but stdin and
//! opens no connection.

use std::io::{Read, Write};
use std::process::ExitCode;

use super::markdown::{PageFormat, html_to_readable};

/// The whole program: its exit status.
pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match args.as_slice() {
        [url, format] => PageFormat::from_name(format).map(|format| (url, format)),
        _ => None,
    };
    let Some((url, format)) = parsed else {
        return usage("expected two arguments: URL and FORMAT (markdown or text)");
    };
    let mut page = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut page) {
        return usage(&format!(
            "reading the page from stdin: {e} (it must be UTF-8)"
        ));
    }
    let text = html_to_readable(&page, url, format);
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => ExitCode::SUCCESS,
        // The worker stopped reading: nobody wants the page any more.
        Err(_) => ExitCode::FAILURE,
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("subagent-render-page: {message}; it is run by subagent-worker for scrape_webpage");
    ExitCode::from(2)
}
