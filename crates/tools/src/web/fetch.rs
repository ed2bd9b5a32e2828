//! One page fetched under the SSRF policy: resolve, check, connect to the
//! checked addresses, follow redirects by hand, stop at the byte cap.
//!
//! reqwest's own redirect following and DNS resolution are both off for
//! this: each hop's host is resolved here, every address it resolves to is
//! checked ([`AddressPolicy`]), and the client is built to connect only to
//! the addresses that were checked (`resolve_to_addrs`), so a DNS answer that
//! changes between check and connect (rebinding) cannot move the
//! connection. Proxies are off too: a proxy would make the connection, and
//! the check would be about the wrong host. Every redirect is a new hop and
//! goes through the same steps.
//!
//! This module returns bytes and their declared type; it does not decide how
//! they are shown. Its tests are `scrape_tests.rs`: they drive it through
//! the tool, against loopback servers.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::Url;
use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use reqwest::redirect::Policy;

use crate::web_policy::{AddressPolicy, RefusedAddress};

/// Redirects followed before giving up (browsers allow about 20; a page a
/// model reads needs few, and each hop costs a check and a connection).
pub const MAX_REDIRECTS: usize = 5;

/// What one fetch may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchLimits {
    /// Body bytes kept (after decompression); the rest is not read.
    pub max_bytes: usize,
    /// Limit on establishing each connection (TCP and TLS).
    pub connect_timeout: Duration,
    /// Limit on the whole fetch, all hops and the body included.
    pub total_timeout: Duration,
}

/// A fetched response body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The URL the body came from, after redirects.
    pub url: Url,
    /// The `Content-Type` header, as sent (empty when absent).
    pub content_type: String,
    /// The body's first `max_bytes` bytes, decompressed.
    pub body: Vec<u8>,
    /// True when the body went on past `max_bytes`.
    pub truncated: bool,
}

/// Why a fetch failed; shown to the model.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Not a URL this tool fetches.
    #[error("invalid URL `{url}`: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The host did not resolve.
    #[error("could not resolve `{host}`: {reason}")]
    Resolve {
        /// The host.
        host: String,
        /// The resolver's error.
        reason: String,
    },
    /// An address the host resolved to is not public.
    #[error("{url}: {refused}")]
    Refused {
        /// The URL of the refused hop.
        url: String,
        /// The refused address and why.
        refused: RefusedAddress,
    },
    /// More redirects than [`MAX_REDIRECTS`].
    #[error("too many redirects: gave up after {MAX_REDIRECTS} (last one to {url})")]
    TooManyRedirects {
        /// Where the redirect past the limit pointed.
        url: String,
    },
    /// The request failed (connect, TLS, protocol).
    #[error("request to {url} failed: {reason}")]
    Request {
        /// The hop's URL.
        url: String,
        /// reqwest's error with its causes.
        reason: String,
    },
    /// The whole fetch ran past its limit.
    #[error("timed out after {} ms fetching {url}", .after.as_millis())]
    TimedOut {
        /// The URL asked for.
        url: String,
        /// The limit.
        after: Duration,
    },
}

/// A final (non-redirect) response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status.
    pub status: reqwest::StatusCode,
    /// Its body, capped.
    pub fetched: Fetched,
}

/// Fetches `url` with a GET, following at most [`MAX_REDIRECTS`] redirects,
/// connecting only where `policy` allows. `accept_body` sees the final
/// response's `Content-Type` before any of its body is read; an `Err` from
/// it ends the fetch there.
pub async fn fetch<E>(
    url: &str,
    policy: &AddressPolicy,
    limits: FetchLimits,
    accept_body: impl Fn(&str) -> Result<(), E>,
) -> Result<Result<Response, E>, FetchError> {
    let work = async {
        let (url, response) = final_response(url, policy, limits).await?;
        let status = response.status();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        if let Err(e) = accept_body(&content_type) {
            return Ok(Err(e));
        }
        let (body, truncated) = read_capped(&url, response, limits.max_bytes).await?;
        Ok(Ok(Response {
            status,
            fetched: Fetched {
                url,
                content_type,
                body,
                truncated,
            },
        }))
    };
    match tokio::time::timeout(limits.total_timeout, work).await {
        Ok(result) => result,
        Err(_) => Err(FetchError::TimedOut {
            url: url.to_owned(),
            after: limits.total_timeout,
        }),
    }
}

/// Follows redirects to the response that is not one.
async fn final_response(
    url: &str,
    policy: &AddressPolicy,
    limits: FetchLimits,
) -> Result<(Url, reqwest::Response), FetchError> {
    let mut current = parse_url(url)?;
    let mut redirects = 0;
    loop {
        let response = send_pinned(&current, policy, limits).await?;
        let next = if response.status().is_redirection() {
            redirect_target(&current, &response)?
        } else {
            None
        };
        let Some(next) = next else {
            return Ok((current, response));
        };
        if redirects == MAX_REDIRECTS {
            return Err(FetchError::TooManyRedirects {
                url: next.to_string(),
            });
        }
        redirects += 1;
        current = next;
    }
}

fn parse_url(url: &str) -> Result<Url, FetchError> {
    let invalid = |reason: String| FetchError::InvalidUrl {
        url: url.to_owned(),
        reason,
    };
    let parsed = Url::parse(url).map_err(|e| invalid(e.to_string()))?;
    check_scheme(&parsed).map_err(invalid)?;
    Ok(parsed)
}

fn check_scheme(url: &Url) -> Result<(), String> {
    match url.scheme() {
        "http" | "https" if url.host().is_some() => Ok(()),
        "http" | "https" => Err("no host".to_owned()),
        other => Err(format!(
            "scheme `{other}` is not fetched (http and https only)"
        )),
    }
}

/// Where a redirect points, or `None` when it names no location (then the
/// 3xx response itself is the answer).
fn redirect_target(current: &Url, response: &reqwest::Response) -> Result<Option<Url>, FetchError> {
    let Some(location) = response.headers().get(LOCATION) else {
        return Ok(None);
    };
    let invalid = |reason: String| FetchError::InvalidUrl {
        url: String::from_utf8_lossy(location.as_bytes()).into_owned(),
        reason: format!("redirect from {current}: {reason}"),
    };
    let location = location
        .to_str()
        .map_err(|_| invalid("location is not ASCII".to_owned()))?;
    let next = current.join(location).map_err(|e| invalid(e.to_string()))?;
    check_scheme(&next).map_err(invalid)?;
    Ok(Some(next))
}

/// Sends one GET to `url`, connecting only to an address `policy` allows.
async fn send_pinned(
    url: &Url,
    policy: &AddressPolicy,
    limits: FetchLimits,
) -> Result<reqwest::Response, FetchError> {
    let sockets = checked_sockets(url, policy).await?;
    let request_failed = |e: reqwest::Error| FetchError::Request {
        url: url.to_string(),
        reason: describe(&e),
    };
    let mut client = reqwest::Client::builder()
        .redirect(Policy::none())
        .no_proxy()
        .connect_timeout(limits.connect_timeout)
        .user_agent(USER_AGENT);
    if let Some(host) = url.domain() {
        // Only the checked addresses: reqwest does no lookup of its own for
        // this host. It connects to the URL's port, the one they were
        // resolved and checked with.
        client = client.resolve_to_addrs(host, &sockets);
    }
    let client = client.build().map_err(request_failed)?;
    client
        .get(url.clone())
        .header(ACCEPT, ACCEPT_VALUE)
        .send()
        .await
        .map_err(request_failed)
}

/// The `User-Agent` pages see.
const USER_AGENT: &str = concat!("subagent-scrape/", env!("CARGO_PKG_VERSION"));
/// What `scrape_webpage` can show, best first.
const ACCEPT_VALUE: &str =
    "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,text/*;q=0.7";

/// The addresses to connect to for `url`: every one its host resolves to,
/// once each has passed `policy` (a host with one private address among
/// public ones is refused: which one a client tries is not ours to guess).
async fn checked_sockets(url: &Url, policy: &AddressPolicy) -> Result<Vec<SocketAddr>, FetchError> {
    let port = url.port_or_known_default().unwrap_or(80);
    let host = url.host_str().unwrap_or("");
    // An IPv6 literal's host string keeps its brackets.
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<SocketAddr> = match literal.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => resolve(host, port).await?,
    };
    if addresses.is_empty() {
        return Err(FetchError::Resolve {
            host: host.to_owned(),
            reason: "no addresses".to_owned(),
        });
    }
    for socket in &addresses {
        policy
            .check(*socket)
            .map_err(|refused| FetchError::Refused {
                url: url.to_string(),
                refused,
            })?;
    }
    Ok(addresses)
}

async fn resolve(host: &str, port: u16) -> Result<Vec<SocketAddr>, FetchError> {
    match tokio::net::lookup_host((host, port)).await {
        Ok(addresses) => Ok(addresses.collect()),
        Err(e) => Err(FetchError::Resolve {
            host: host.to_owned(),
            reason: e.to_string(),
        }),
    }
}

/// Reads at most `max_bytes` of the body; the connection is dropped after,
/// so a huge or endless body costs no more than the cap.
async fn read_capped(
    url: &Url,
    response: reqwest::Response,
    max_bytes: usize,
) -> Result<(Vec<u8>, bool), FetchError> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| FetchError::Request {
            url: url.to_string(),
            reason: describe(&e),
        })?;
        let room = max_bytes - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

/// reqwest's error with its causes: its own message rarely says why.
pub(super) fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
