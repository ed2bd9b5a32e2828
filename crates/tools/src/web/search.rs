//! `search_web`: a query sent to the operator's search API, answered with
//! numbered results (title, URL, snippet).
//!
//! Two APIs: a SearXNG instance's JSON API and the Brave Search API, picked
//! by the task's [`SearchBackend`]. The backend URL is operator
//! configuration, so it is NOT subject to the SSRF filter of `ssrf.rs`: a
//! SearXNG on localhost is the normal setup. Without a backend the call
//! fails with the setting to add. This tool sends only the query.

use std::time::Duration;

use reqwest::Url;
use serde::Deserialize;
use subagent_protocol::text::prefix_chars;
use subagent_protocol::tool_names::SEARCH_WEB;
use subagent_protocol::{SearchBackend, SearchKind};

use super::fetch::describe;
use crate::arguments::{count_in_range, parse_arguments};
use crate::tool::{Tool, ToolContext, ToolError, ToolFuture, ToolOutput};

/// Results shown when the call names no `max_results`.
pub const SEARCH_DEFAULT_RESULTS: usize = 5;
/// Most results a call may ask for (Brave's `count` maximum).
pub const SEARCH_MAX_RESULTS: usize = 20;
/// Limit on connecting to the search API.
const SEARCH_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Limit on one search, answer included.
const SEARCH_TOTAL_TIMEOUT: Duration = Duration::from_secs(30);
/// Largest answer read; a results page is a few tens of KiB.
const SEARCH_MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// What to tell the model (and so the operator) when no backend is set.
pub const SEARCH_NOT_CONFIGURED: &str = "no search backend is configured: add \
`[search] backend = \"searxng\", url = \"http://...\"` (or backend = \"brave\" with \
api_key_env) to .subagent/config.toml";

const DESCRIPTION: &str = "Search the web. Returns numbered results, each with its title, URL \
and a snippet. Read a result in full with scrape_webpage.";

/// The `search_web` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct SearchWeb;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArguments {
    query: String,
    #[serde(default)]
    max_results: Option<u64>,
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchResult {
    /// The page's title.
    pub title: String,
    /// Its URL.
    pub url: String,
    /// What the engine quotes of it.
    pub snippet: String,
}

impl Tool for SearchWeb {
    fn name(&self) -> &str {
        SEARCH_WEB
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to search for."},
                "max_results": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": SEARCH_MAX_RESULTS,
                    "description": format!("Number of results (default {SEARCH_DEFAULT_RESULTS}).")
                }
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, arguments: serde_json::Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let arguments: SearchArguments = parse_arguments(arguments)?;
            let count = count_in_range(
                "max_results",
                arguments.max_results,
                SEARCH_DEFAULT_RESULTS,
                SEARCH_MAX_RESULTS,
            )?;
            let query = arguments.query.trim();
            if query.is_empty() {
                return Err(ToolError::InvalidArguments("query is empty".to_owned()));
            }
            let Some(backend) = &ctx.web.search else {
                return Err(ToolError::Failed(SEARCH_NOT_CONFIGURED.to_owned()));
            };
            let timeout = SEARCH_TOTAL_TIMEOUT.min(ctx.timeout);
            let body = tokio::time::timeout(timeout, request(backend, query, count))
                .await
                .map_err(|_| {
                    ToolError::Failed(format!(
                        "the search API at {} did not answer within {} ms",
                        backend.url,
                        timeout.as_millis()
                    ))
                })??;
            let mut results = parse_results(backend.kind, &body)?;
            results.truncate(count);
            Ok(ToolOutput::text(format_results(query, &results)))
        })
    }
}

/// The request URL for `query` on `backend`.
pub fn search_url(backend: &SearchBackend, query: &str, count: usize) -> Result<Url, ToolError> {
    let path = match backend.kind {
        SearchKind::Searxng => "/search",
        SearchKind::Brave => "/res/v1/web/search",
    };
    let base = backend.url.trim_end_matches('/');
    let mut url = Url::parse(&format!("{base}{path}")).map_err(|e| {
        ToolError::Failed(format!(
            "the search backend URL `{}` is invalid: {e}",
            backend.url
        ))
    })?;
    {
        let mut pairs = url.query_pairs_mut();
        pairs.append_pair("q", query);
        match backend.kind {
            SearchKind::Searxng => pairs.append_pair("format", "json"),
            SearchKind::Brave => pairs.append_pair("count", &count.to_string()),
        };
    }
    Ok(url)
}

async fn request(backend: &SearchBackend, query: &str, count: usize) -> Result<Vec<u8>, ToolError> {
    let url = search_url(backend, query, count)?;
    let failed = |e: reqwest::Error| {
        ToolError::Failed(format!(
            "search request to {} failed: {}",
            backend.url,
            describe(&e)
        ))
    };
    let client = reqwest::Client::builder()
        .connect_timeout(SEARCH_CONNECT_TIMEOUT)
        .build()
        .map_err(failed)?;
    let mut request = client
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json");
    if backend.kind == SearchKind::Brave {
        let Some(key) = &backend.api_key else {
            return Err(ToolError::Failed(
                "the Brave search backend has no API key: set `api_key_env` in [search] of \
                 .subagent/config.toml to the variable holding it"
                    .to_owned(),
            ));
        };
        request = request.header("X-Subscription-Token", key.expose());
    }
    let mut response = request.send().await.map_err(failed)?;
    let status = response.status();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        if body.len() + chunk.len() > SEARCH_MAX_RESPONSE_BYTES {
            return Err(ToolError::Failed(format!(
                "the search API's answer exceeded {SEARCH_MAX_RESPONSE_BYTES} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    if !status.is_success() {
        let body = String::from_utf8_lossy(&body);
        let excerpt = prefix_chars(&body, 300);
        return Err(ToolError::Failed(format!(
            "the search API at {} answered HTTP {status}: {excerpt}",
            backend.url
        )));
    }
    Ok(body)
}

#[derive(Deserialize)]
struct SearxngAnswer {
    #[serde(default)]
    results: Vec<SearxngResult>,
}

#[derive(Deserialize)]
struct SearxngResult {
    #[serde(default)]
    title: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    content: String,
}

#[derive(Deserialize)]
struct BraveAnswer {
    #[serde(default)]
    web: Option<BraveWeb>,
}

#[derive(Deserialize)]
struct BraveWeb {
    #[serde(default)]
    results: Vec<BraveResult>,
}

#[derive(Deserialize)]
struct BraveResult {
    #[serde(default)]
    title: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    description: String,
}

/// The results in an answer of `kind`'s API.
pub fn parse_results(kind: SearchKind, body: &[u8]) -> Result<Vec<SearchResult>, ToolError> {
    let invalid = |e: serde_json::Error| {
        ToolError::Failed(format!(
            "the search API's answer is not the expected JSON: {e}"
        ))
    };
    let results = match kind {
        SearchKind::Searxng => serde_json::from_slice::<SearxngAnswer>(body)
            .map_err(invalid)?
            .results
            .into_iter()
            .map(|r| (r.title, r.url, r.content))
            .collect::<Vec<_>>(),
        SearchKind::Brave => serde_json::from_slice::<BraveAnswer>(body)
            .map_err(invalid)?
            .web
            .map(|web| web.results)
            .unwrap_or_default()
            .into_iter()
            .map(|r| (r.title, r.url, r.description))
            .collect(),
    };
    Ok(results
        .into_iter()
        .map(|(title, url, snippet)| SearchResult {
            title: strip_tags(&title),
            url,
            snippet: strip_tags(&snippet),
        })
        .collect())
}

/// Numbered results, three lines each.
pub fn format_results(query: &str, results: &[SearchResult]) -> String {
    if results.is_empty() {
        return format!("no results for `{query}`");
    }
    let mut out = String::new();
    for (n, result) in results.iter().enumerate() {
        out.push_str(&format!("{}. {}\n   {}\n", n + 1, result.title, result.url));
        if !result.snippet.is_empty() {
            out.push_str(&format!("   {}\n", result.snippet));
        }
    }
    out
}

/// `text` without HTML tags and with the common entities decoded: Brave
/// marks matches with `<strong>`.
fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match (c, in_tag) {
            ('<', _) => in_tag = true,
            ('>', true) => in_tag = false,
            (_, true) => {}
            (c, false) => out.push(c),
        }
    }
    let decoded = out
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    decoded.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
