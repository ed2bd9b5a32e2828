//! `scrape_webpage`: one web page as Markdown or plain text.
//!
//! In: a URL, a byte cap, a format. Out: the final URL, then the page's
//! readable content (see `markdown.rs`; in the worker, an HTML page is
//! rendered by the helper program of `render.rs`). The fetch (`fetch.rs`) refuses
//! non-public addresses unless the operator allowed private networks,
//! follows at most five redirects, stops reading at the byte cap and gives
//! up after [`SCRAPE_TOTAL_TIMEOUT`]. Bodies that are not HTML, text or JSON
//! are refused by their type before they are read. This tool never writes
//! anywhere and sends nothing but a GET.

use std::time::Duration;

use serde::Deserialize;
use subagent_protocol::tool_names::SCRAPE_WEBPAGE;

use super::decode::{body_kind, decode_body, parse_content_type};
use super::fetch::{FetchLimits, fetch};
use super::markdown::{BodyKind, PageFormat, html_to_readable};
use super::render::PageRenderer;
use crate::arguments::{count_in_range, parse_arguments};
use crate::blocking::run_blocking;
use crate::tool::{Tool, ToolContext, ToolError, ToolFuture, ToolOutput};

/// Body bytes read when the call names no `max_bytes` (after
/// decompression; the page is cut there). Enough for nearly every article;
/// the output caps cut the rendered text further.
pub const SCRAPE_DEFAULT_BYTES: usize = 2 * 1024 * 1024;
/// Largest `max_bytes` a call may ask for: the body is held in memory and
/// parsed whole.
pub const SCRAPE_MAX_BYTES: usize = 10 * 1024 * 1024;
/// Limit on each connection's TCP and TLS handshake.
pub const SCRAPE_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Limit on the whole fetch, redirects and body included (the call's own
/// timeout applies when shorter).
pub const SCRAPE_TOTAL_TIMEOUT: Duration = Duration::from_secs(30);

const DESCRIPTION: &str = "Fetch one web page (http or https) and return its readable content: \
the main text as Markdown with links kept (or plain text with format \"text\"); text and JSON \
are returned as they are. Other content types (images, PDFs, archives) are refused. Pages on \
loopback, private or link-local addresses are refused. Long pages are cut at max_bytes.";

/// The `scrape_webpage` tool.
#[derive(Debug, Clone)]
pub struct ScrapeWebpage {
    renderer: PageRenderer,
}

impl ScrapeWebpage {
    /// Renders HTML pages with `renderer`.
    pub fn new(renderer: PageRenderer) -> Self {
        Self { renderer }
    }

    /// Renders HTML pages in this process (links the HTML parser).
    pub fn in_process() -> Self {
        Self::new(PageRenderer::InProcess(html_to_readable))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScrapeArguments {
    url: String,
    #[serde(default)]
    max_bytes: Option<u64>,
    #[serde(default)]
    format: PageFormat,
}

impl Tool for ScrapeWebpage {
    fn name(&self) -> &str {
        SCRAPE_WEBPAGE
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "url": {
                    "type": "string",
                    "description": "The page's absolute http or https URL."
                },
                "max_bytes": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": SCRAPE_MAX_BYTES,
                    "description": format!("Most bytes of the page to read (default {SCRAPE_DEFAULT_BYTES}).")
                },
                "format": {
                    "type": "string",
                    "enum": ["markdown", "text"],
                    "description": "How to render an HTML page. Default: markdown."
                }
            },
            "required": ["url"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, arguments: serde_json::Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let arguments: ScrapeArguments = parse_arguments(arguments)?;
            let max_bytes = count_in_range(
                "max_bytes",
                arguments.max_bytes,
                SCRAPE_DEFAULT_BYTES,
                SCRAPE_MAX_BYTES,
            )?;
            let limits = FetchLimits {
                max_bytes,
                connect_timeout: SCRAPE_CONNECT_TIMEOUT,
                total_timeout: SCRAPE_TOTAL_TIMEOUT.min(ctx.timeout),
            };
            let response = fetch(&arguments.url, &ctx.web.addresses, limits, |content_type| {
                let (media_type, _) = parse_content_type(content_type);
                match body_kind(&media_type) {
                    Some(_) => Ok(()),
                    None => Err(ToolError::Failed(format!(
                        "refusing content type `{media_type}` of {}: scrape_webpage reads HTML, \
                         text and JSON only",
                        arguments.url
                    ))),
                }
            })
            .await
            .map_err(|e| ToolError::Failed(e.to_string()))??;
            let fetched = response.fetched;
            if !response.status.is_success() {
                return Err(ToolError::Failed(format!(
                    "HTTP {} from {}",
                    response.status, fetched.url
                )));
            }
            let (media_type, charset) = parse_content_type(&fetched.content_type);
            let Some(kind) = body_kind(&media_type) else {
                return Err(ToolError::Failed(format!(
                    "refusing content type `{media_type}`"
                )));
            };
            let format = arguments.format;
            let renderer = self.renderer.clone();
            run_blocking(move |_cancel| {
                let text = decode_body(&fetched.body, charset.as_deref(), kind);
                let page = match kind {
                    BodyKind::Plain => text,
                    BodyKind::Html => renderer.render(&text, fetched.url.as_str(), format)?,
                };
                let mut out = format!("URL: {}\n", fetched.url);
                if fetched.truncated {
                    out.push_str(&format!(
                        "[page cut after {max_bytes} bytes (max_bytes); the rest was not read]\n"
                    ));
                }
                out.push('\n');
                out.push_str(&page);
                Ok(ToolOutput::text(out))
            })
            .await
        })
    }
}

#[cfg(test)]
#[path = "scrape_tests.rs"]
mod tests;
