//! Where `scrape_webpage` turns a fetched HTML page into readable text: in
//! this process, or in the page renderer, a helper program beside the
//! worker fed the page on stdin.
//!
//! Why a helper: the HTML parser brings two tables of HTML entity names
//! (about 320 KiB of pointers) that the dynamic loader relocates at every
//! exec, so a worker that links it pays them in private memory and start
//! time whether or not it ever scrapes a page (BENCHMARKS.md,
//! `spawn.worker_private_dirty`). The worker names the helper
//! ([`PageRenderer::beside_this_program`]) and never links the parser; the
//! helper, and the tests, render in process ([`PageRenderer::InProcess`]).
//! Parsing the untrusted page then also happens outside the process that
//! holds the API key.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::markdown::PageFormat;
use crate::tool::ToolError;

/// File name of the page renderer, installed beside `subagent-worker`.
pub const RENDER_PAGE_PROGRAM: &str = "subagent-render-page";

/// Most bytes of the renderer's stderr kept for an error message.
const MAX_RENDERER_STDERR_BYTES: u64 = 4 * 1024;

/// Renders an HTML page: `(html, url, format) -> text`.
pub type RenderFn = fn(&str, &str, PageFormat) -> String;

/// How HTML pages are rendered.
#[derive(Debug, Clone)]
pub enum PageRenderer {
    /// By this function, in this process.
    InProcess(RenderFn),
    /// By the page renderer program at this path, one process a page.
    Helper(PathBuf),
    /// By the page renderer beside this process's own executable, looked up
    /// when a page is rendered.
    BesideThisProgram,
}

impl PageRenderer {
    /// The page renderer beside this process's executable.
    pub fn beside_this_program() -> Self {
        Self::BesideThisProgram
    }

    /// `html`, the page at `url`, rendered in `format`.
    pub fn render(&self, html: &str, url: &str, format: PageFormat) -> Result<String, ToolError> {
        match self {
            Self::InProcess(render) => Ok(render(html, url, format)),
            Self::Helper(program) => render_in_helper(program, html, url, format),
            Self::BesideThisProgram => {
                let exe = std::env::current_exe().map_err(|e| {
                    ToolError::Failed(format!(
                        "cannot find the page renderer: this program's own path is unknown ({e})"
                    ))
                })?;
                render_in_helper(&exe.with_file_name(RENDER_PAGE_PROGRAM), html, url, format)
            }
        }
    }
}

/// Runs `program URL FORMAT` with the page on its stdin; its stdout is the
/// rendered page.
fn render_in_helper(
    program: &Path,
    html: &str,
    url: &str,
    format: PageFormat,
) -> Result<String, ToolError> {
    // It reads the page from stdin and needs nothing of the worker's
    // environment; none of it is handed on.
    let mut child = Command::new(program)
        .env_clear()
        .arg(url)
        .arg(format.name())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            ToolError::Failed(format!(
                "cannot start the page renderer {}: {e}; it is installed beside subagent-worker \
                 (build or install both binaries of the subagent-worker package)",
                program.display()
            ))
        })?;
    // Written from a thread: a large page could fill the stdin pipe while
    // the renderer is blocked writing a large result into its stdout.
    let writer = child.stdin.take().map(|mut stdin| {
        let page = html.as_bytes().to_vec();
        std::thread::spawn(move || stdin.write_all(&page))
    });
    // Drained whole from its own thread, so a chatty renderer cannot block
    // on a full stderr pipe while this thread reads stdout.
    let errors = child.stderr.take().map(|mut err| {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            let _ = (&mut err)
                .take(MAX_RENDERER_STDERR_BYTES)
                .read_to_end(&mut kept);
            let _ = std::io::copy(&mut err, &mut std::io::sink());
            String::from_utf8_lossy(&kept).into_owned()
        })
    });
    let mut text = String::new();
    let read = match child.stdout.take() {
        Some(mut stdout) => stdout.read_to_string(&mut text).map(|_| ()),
        None => Ok(()),
    };
    let stderr = errors
        .and_then(|thread| thread.join().ok())
        .unwrap_or_default();
    let status = child
        .wait()
        .map_err(|e| ToolError::Failed(format!("waiting for the page renderer: {e}")))?;
    // A renderer that exits early breaks the pipe; its status says why.
    let _ = writer.map(std::thread::JoinHandle::join);
    if !status.success() {
        return Err(ToolError::Failed(format!(
            "the page renderer failed ({status}): {}",
            stderr.trim()
        )));
    }
    read.map_err(|e| ToolError::Failed(format!("reading the rendered page: {e}")))?;
    Ok(text)
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
