//! The model endpoint probes of `subagent doctor`: reachable, and serving
//! the model a run would ask for. Plain HTTP/1.0 over a `TcpStream` with
//! timeouts, so a dead or hostile endpoint cannot hang the doctor; https
//! is checked by connecting only (no TLS client here).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use super::Probe;

/// How long connecting to, and then hearing back from, a model endpoint
/// may take: a local server answers in milliseconds, an unroutable address
/// would otherwise block for the kernel's connect timeout (minutes).
pub const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(3);

/// How long a 1-token model request may wait for its answer: a local model
/// on a busy CPU evaluates the prompt before it sends a byte.
const MODEL_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// The most of an answer that is read (bytes): model lists are a few KiB;
/// a server streaming without end must not fill memory.
const MAX_MODELS_BODY_BYTES: u64 = 1024 * 1024;

/// Where an `http://` or `https://` base URL points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpTarget {
    /// Whether the scheme is `https` (TLS: only connecting is checked).
    pub tls: bool,
    /// Host name or address, without IPv6 brackets.
    pub host: String,
    /// Port, the scheme's default when the URL names none.
    pub port: u16,
    /// The base path without a trailing `/` (`/v1`, or empty).
    pub path: String,
}

/// Splits a base URL into scheme, host, port and path; the error says what
/// is wrong with it.
pub fn parse_http_url(url: &str) -> Result<HttpTarget, String> {
    let (tls, rest) = if let Some(rest) = url.strip_prefix("http://") {
        (false, rest)
    } else if let Some(rest) = url.strip_prefix("https://") {
        (true, rest)
    } else {
        return Err(format!("{url:?} is not an http:// or https:// URL"));
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    // Userinfo is not ours to send; only where it points matters.
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let default_port = if tls { 443 } else { 80 };
    let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        let (host, after) = bracketed
            .split_once(']')
            .ok_or_else(|| format!("{url:?} has an unclosed IPv6 address"))?;
        (host, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err(format!("{url:?} has no host"));
    }
    let port = match port {
        None | Some("") => default_port,
        Some(p) => p
            .parse()
            .map_err(|_| format!("{url:?} has a bad port {p:?}"))?,
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    Ok(HttpTarget {
        tls,
        host: host.to_owned(),
        port,
        path: path.trim_end_matches('/').to_owned(),
    })
}

/// The model ids of a `/models` answer (`{"data":[{"id":...}]}`, the shape
/// OpenAI, Anthropic, llama-server and Ollama share); `None` when the body
/// is not that.
pub fn model_ids(body: &str) -> Option<Vec<String>> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    let ids = value
        .get("data")?
        .as_array()?
        .iter()
        .filter_map(|m| m.get("id")?.as_str().map(str::to_owned))
        .collect();
    Some(ids)
}

const ENDPOINT_FIX: &str = "start the model server or correct `--base-url` \
    (e.g. `cargo xtask local-model serve --port 8080` and `--base-url http://127.0.0.1:8080/v1`)";

/// The model endpoint: reachable, and, when its `/models` list can be read,
/// whether `model` is in it (a second probe, `model`).
///
/// Plain `http://` endpoints get a real `GET <base>/models`; for
/// `https://` only the TCP connection is checked (this crate has no TLS
/// client), and the detail says so.
///
/// An OpenAI-compatible server (`openai-*` providers) that does not list
/// the model is a warning, not a failure: llama-server lists the file it
/// loaded and answers to any model name, and other local servers load on
/// demand. [`endpoint_probes_asking`] settles it with a 1-token request.
pub fn endpoint_probes(base_url: &str, provider: &str, model: Option<&str>) -> Vec<Probe> {
    endpoint_probes_asking(base_url, provider, model, false)
}

/// [`endpoint_probes`]; with `ask`, an unlisted model is settled by a
/// 1-token request to it (`subagent doctor --probe-model`), which costs a
/// token on a paid endpoint and so is only sent when asked.
pub fn endpoint_probes_asking(
    base_url: &str,
    provider: &str,
    model: Option<&str>,
    ask: bool,
) -> Vec<Probe> {
    let target = match parse_http_url(base_url) {
        Ok(target) => target,
        Err(why) => {
            return vec![Probe::missing(
                "endpoint",
                why,
                "pass `--base-url` as a URL, e.g. http://127.0.0.1:8080/v1",
            )];
        }
    };
    let mut stream = match connect(&target) {
        Ok(stream) => stream,
        Err(why) => {
            return vec![Probe::missing(
                "endpoint",
                format!("{base_url} ({provider}) is unreachable: {why}"),
                ENDPOINT_FIX,
            )];
        }
    };
    if target.tls {
        return vec![Probe::ok(
            "endpoint",
            format!(
                "{base_url} ({provider}) accepts connections; the model list was not read \
                 (https is checked by connecting only)"
            ),
        )];
    }
    let (status, body) = match get_models(&mut stream, &target) {
        Ok(answer) => answer,
        Err(why) => {
            return vec![Probe::missing(
                "endpoint",
                format!(
                    "{base_url} ({provider}) accepted a connection but GET /models failed: {why}"
                ),
                ENDPOINT_FIX,
            )];
        }
    };
    let ids = (200..300)
        .contains(&status)
        .then(|| model_ids(&body))
        .flatten();
    let Some(ids) = ids else {
        // Reachable is what this probe asks; a 401 without a key or a
        // server without /models still answers.
        return vec![Probe::ok(
            "endpoint",
            format!("{base_url} ({provider}) answers (HTTP {status}); no model list to check"),
        )];
    };
    let mut probes = vec![Probe::ok(
        "endpoint",
        format!(
            "{base_url} ({provider}) answers; {} model(s) listed",
            ids.len()
        ),
    )];
    if let Some(model) = model {
        let unlisted = format!("{model} is not listed (listed: {})", ids.join(", "));
        probes.push(if ids.iter().any(|id| id == model) {
            Probe::ok("model", format!("{model} is listed"))
        } else if ask {
            model_request_probe(&target, provider, model, &unlisted)
        } else if provider.starts_with("openai") {
            Probe::warning(
                "model",
                format!("{unlisted}; an OpenAI-compatible server may serve it anyway"),
                "`subagent doctor --probe-model` sends a 1-token request to settle it",
            )
        } else {
            Probe::missing("model", unlisted, UNLISTED_MODEL_FIX)
        });
    }
    probes
}

const UNLISTED_MODEL_FIX: &str =
    "pass `--model` with one of the listed ids, or load that model on the server";

/// The answer to a 1-token request for `model`: served (ok), refused
/// (missing, with the server's words), or not settled (a warning: a 401
/// because the doctor sends no key, a timeout).
fn model_request_probe(target: &HttpTarget, provider: &str, model: &str, unlisted: &str) -> Probe {
    let (path, body) = if provider == "anthropic" || provider.contains("anthropic") {
        (
            "/messages",
            serde_json::json!({"model": model, "max_tokens": 1,
                "messages": [{"role": "user", "content": "ping"}]}),
        )
    } else if provider == "openai-responses" {
        (
            "/responses",
            serde_json::json!({"model": model, "max_output_tokens": 16, "input": "ping"}),
        )
    } else {
        (
            "/chat/completions",
            serde_json::json!({"model": model, "max_tokens": 1,
                "messages": [{"role": "user", "content": "ping"}]}),
        )
    };
    let answer = connect(target).and_then(|mut stream| {
        http_exchange(
            &mut stream,
            target,
            MODEL_REQUEST_TIMEOUT,
            ("POST", path),
            Some(&body),
        )
    });
    match answer {
        Ok((status, _)) if (200..300).contains(&status) => Probe::ok(
            "model",
            format!("{unlisted}, but it answered a 1-token request (HTTP {status})"),
        ),
        Ok((status @ (400 | 404 | 422), body)) => Probe::missing(
            "model",
            format!(
                "{unlisted}, and a 1-token request was refused: HTTP {status} {}",
                excerpt(&body)
            ),
            UNLISTED_MODEL_FIX,
        ),
        Ok((status, body)) => Probe::warning(
            "model",
            format!(
                "{unlisted}; a 1-token request did not settle it: HTTP {status} {}",
                excerpt(&body)
            ),
            "the doctor sends no API key: try a run with the model",
        ),
        Err(why) => Probe::warning(
            "model",
            format!("{unlisted}; a 1-token request did not settle it: {why}"),
            "try a run with the model",
        ),
    }
}

/// The start of a server's answer, on one line, for a probe's detail.
fn excerpt(body: &str) -> String {
    /// An error body is a sentence or a small JSON object; more is noise.
    const MAX_CHARS: usize = 200;
    let flat = body.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(MAX_CHARS) {
        Some((end, _)) => format!("{}...", &flat[..end]),
        None => flat,
    }
}

fn connect(target: &HttpTarget) -> Result<TcpStream, String> {
    let addrs: Vec<SocketAddr> = (target.host.as_str(), target.port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {}: {e}", target.host))?
        .collect();
    let mut last = format!("{} resolves to no address", target.host);
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, ENDPOINT_TIMEOUT) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = format!("connecting to {addr}: {e}"),
        }
    }
    Err(last)
}

/// One `GET <base>/models`.
fn get_models(stream: &mut TcpStream, target: &HttpTarget) -> Result<(u16, String), String> {
    http_exchange(stream, target, ENDPOINT_TIMEOUT, ("GET", "/models"), None)
}

/// One request to `<base><path>` with an optional JSON body, as HTTP/1.0 so
/// the answer is never chunked and ends when the server closes.
fn http_exchange(
    stream: &mut TcpStream,
    target: &HttpTarget,
    timeout: Duration,
    (method, path): (&str, &str),
    json: Option<&serde_json::Value>,
) -> Result<(u16, String), String> {
    stream
        .set_read_timeout(Some(timeout))
        .and_then(|()| stream.set_write_timeout(Some(timeout)))
        .map_err(|e| e.to_string())?;
    let host = if target.host.contains(':') {
        format!("[{}]:{}", target.host, target.port)
    } else {
        format!("{}:{}", target.host, target.port)
    };
    let body = json.map(ToString::to_string).unwrap_or_default();
    let content = if json.is_some() {
        format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        )
    } else {
        String::new()
    };
    let request = format!(
        "{method} {}{path} HTTP/1.0\r\nHost: {host}\r\nAccept: application/json\r\n\
         User-Agent: subagent-doctor\r\n{content}Connection: close\r\n\r\n{body}",
        target.path
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("sending the request: {e}"))?;
    let mut answer = Vec::new();
    stream
        .take(MAX_MODELS_BODY_BYTES)
        .read_to_end(&mut answer)
        .map_err(|e| format!("reading the answer: {e}"))?;
    let answer = String::from_utf8_lossy(&answer);
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .ok_or("the answer is not HTTP (no end of headers)")?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or("the answer is not HTTP (no status line)")?;
    Ok((status, body.to_owned()))
}
