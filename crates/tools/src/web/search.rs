//! `search_web`: a query sent to the operator's search API, answered with
//! numbered results (title, URL, snippet).
//!
//! Two APIs: a SearXNG instance's JSON API and the Brave Search API, picked
//! by the task's [`SearchBackend`]. The backend URL is operator
//! configuration, so it is NOT subject to the SSRF filter of `ssrf.rs`: a
//! SearXNG on localhost is the normal setup. Without a backend the call
//! fails with the setting to add. This tool sends only the query.
//!
//! Redirects are followed by hand and only within the backend's origin
//! (scheme, host and port), at most [`SEARCH_MAX_REDIRECTS`] of them: a
//! backend (or an open redirect on it) answering 302 to another host must
//! not carry the request, and the Brave key with it, to that host, a
//! loopback or LAN service included. So the key only ever goes to the
//! host the operator configured.

use std::time::Duration;

use reqwest::Url;
use reqwest::header::LOCATION;
use reqwest::redirect::Policy;
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
/// Redirects followed within the backend's origin (a SearXNG behind a
/// proxy may add a slash or a prefix; more hops than this is a loop).
pub const SEARCH_MAX_REDIRECTS: usize = 3;
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
    let mut url = search_url(backend, query, count)?;
    let failed = |e: reqwest::Error| {
        ToolError::Failed(format!(
            "search request to {} failed: {}",
            backend.url,
            describe(&e)
        ))
    };
    let key = match (backend.kind, &backend.api_key) {
        (SearchKind::Brave, Some(key)) => Some(key),
        (SearchKind::Brave, None) => {
            return Err(ToolError::Failed(
                "the Brave search backend has no API key: set `api_key_env` in [search] of \
                 .subagent/config.toml to the variable holding it"
                    .to_owned(),
            ));
        }
        (SearchKind::Searxng, _) => None,
    };
    // reqwest's default policy follows up to ten redirects to any host and
    // keeps custom headers (the key) on them: off, and followed below.
    let client = reqwest::Client::builder()
        .connect_timeout(SEARCH_CONNECT_TIMEOUT)
        .redirect(Policy::none())
        .build()
        .map_err(failed)?;
    let origin = url.origin();
    let mut redirects = 0;
    let mut response = loop {
        let mut request = client
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(key) = key {
            request = request.header("X-Subscription-Token", key.expose());
        }
        let response = request.send().await.map_err(failed)?;
        let Some(next) = redirect_location(backend, &url, &response)? else {
            break response;
        };
        if next.origin() != origin {
            return Err(ToolError::Failed(format!(
                "the search API at {} redirected to {}, another host: search_web follows \
                 redirects only within the configured backend (same scheme, host and port); \
                 if the backend moved, set [search] url to its new address",
                backend.url,
                next.origin().ascii_serialization()
            )));
        }
        if redirects == SEARCH_MAX_REDIRECTS {
            return Err(ToolError::Failed(format!(
                "the search API at {} redirected more than {SEARCH_MAX_REDIRECTS} times",
                backend.url
            )));
        }
        redirects += 1;
        url = next;
    };
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

/// Where a redirect answer points (resolved against `current`), or `None`
/// when `response` is no redirect or names no location.
fn redirect_location(
    backend: &SearchBackend,
    current: &Url,
    response: &reqwest::Response,
) -> Result<Option<Url>, ToolError> {
    if !response.status().is_redirection() {
        return Ok(None);
    }
    let Some(location) = response.headers().get(LOCATION) else {
        return Ok(None);
    };
    let invalid = || {
        ToolError::Failed(format!(
            "the search API at {} answered a redirect with an invalid location",
            backend.url
        ))
    };
    let location = location.to_str().map_err(|_| invalid())?;
    current.join(location).map(Some).map_err(|_| invalid())
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
