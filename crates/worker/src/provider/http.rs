//! The HTTP side of every provider: one reqwest client (rustls, no
//! redirects) that POSTs a JSON body and hands back the answer as a stream
//! of SSE events, with the idle limit on every wait for bytes and the
//! cancel token watched throughout.
//!
//! An error status becomes a readable [`ProviderError::Status`] (status,
//! provider error type, message) together with advice on whether it may be
//! retried; the API key is scrubbed from anything a server echoes (by
//! `subagent_redact`, the masking the supervisor uses too). This
//! module never retries by itself (see [`super::stream_turn`]) and never
//! logs.

use std::collections::VecDeque;
use std::future::Future;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use subagent_protocol::ApiKey;
use tokio_util::sync::CancellationToken;

use super::ProviderError;
use super::retry::{parse_retry_after, parse_retry_after_ms};
use super::sse::{SseEvent, SseParser};

/// Longest wait for a TCP (and TLS) connection, in seconds. Connecting is
/// quick or hopeless; the idle limit covers everything after it.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Most bytes of an error response read, in bytes: enough for any JSON
/// error object, bounded against a server that streams HTML forever.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// Most characters of a provider's error message kept in an error.
const MAX_ERROR_MESSAGE_CHARS: usize = 2_000;

/// Whether a failed attempt may be tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetryAdvice {
    /// Final: retrying would not help or is not allowed.
    Never,
    /// Transient; wait for `retry_after` when the provider said so.
    Backoff {
        /// The provider's `Retry-After`, uncapped.
        retry_after: Option<Duration>,
    },
}

/// A failed attempt.
#[derive(Debug)]
pub(crate) struct Failure {
    /// What went wrong.
    pub error: ProviderError,
    /// Whether it may be retried.
    pub advice: RetryAdvice,
}

impl Failure {
    /// A failure that must not be retried.
    pub(crate) fn fatal(error: ProviderError) -> Self {
        Self {
            error,
            advice: RetryAdvice::Never,
        }
    }
}

/// The HTTP client of one provider.
#[derive(Debug, Clone)]
pub(crate) struct HttpClient {
    client: reqwest::Client,
    idle: Duration,
    cancel: Option<CancellationToken>,
    secret: Option<ApiKey>,
}

impl HttpClient {
    /// A client whose waits are bounded by `idle` and stopped by `cancel`;
    /// `secret` is scrubbed from every error it returns.
    pub(crate) fn new(
        idle: Duration,
        cancel: Option<CancellationToken>,
        secret: Option<ApiKey>,
    ) -> Result<Self, ProviderError> {
        if idle.is_zero() {
            return Err(ProviderError::Invalid(
                "the idle timeout is zero; give it a positive duration".into(),
            ));
        }
        let client = reqwest::Client::builder()
            .user_agent(concat!("subagent-worker/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(CONNECT_TIMEOUT)
            // An API endpoint that redirects is misconfigured; following it
            // would turn the POST into a GET and hide the real status.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| {
                ProviderError::Invalid(format!("could not build the HTTP client: {}", chain(&e)))
            })?;
        Ok(Self {
            client,
            idle,
            cancel,
            secret,
        })
    }

    /// A header value carrying the API key, marked sensitive so it is never
    /// printed by `Debug`.
    pub(crate) fn secret_header(&self, prefix: &str) -> Result<Option<HeaderValue>, ProviderError> {
        let Some(key) = &self.secret else {
            return Ok(None);
        };
        let mut value =
            HeaderValue::from_str(&format!("{prefix}{}", key.expose())).map_err(|_| {
                ProviderError::Invalid(
                    "the API key contains characters not allowed in an HTTP header \
                 (a trailing newline?); check how it was set"
                        .into(),
                )
            })?;
        value.set_sensitive(true);
        Ok(Some(value))
    }

    /// POSTs `body` to `url` and returns the event stream of a 2xx answer.
    pub(crate) async fn open_stream(
        &self,
        url: &str,
        headers: HeaderMap,
        body: &serde_json::Value,
    ) -> Result<EventStream, Failure> {
        let bytes = serde_json::to_vec(body).map_err(|e| {
            Failure::fatal(ProviderError::Invalid(format!(
                "could not encode the request body: {e}"
            )))
        })?;
        let request = self
            .client
            .post(url)
            .headers(headers)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(bytes);
        let response = match self.bounded(request.send()).await {
            Err(stopped) => return Err(Failure::fatal(stopped)),
            Ok(Err(e)) => return Err(transport_failure(url, &e)),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if !status.is_success() {
            return Err(self.status_failure(response).await);
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        if !content_type.starts_with("text/event-stream") {
            let body = self.read_capped(response).await;
            let (_, excerpt) = describe_error_body(&body);
            return Err(Failure::fatal(ProviderError::Stream(format!(
                "expected an event stream but got content-type {content_type:?} \
                 (does this server support streaming at this URL?): {}",
                self.scrub(&excerpt)
            ))));
        }
        Ok(EventStream {
            response,
            parser: SseParser::new(),
            queue: VecDeque::new(),
            ended: false,
            waits: self.clone(),
        })
    }

    /// Sleeps for `delay` unless cancelled first.
    pub(crate) async fn sleep(&self, delay: Duration) -> Result<(), ProviderError> {
        match &self.cancel {
            None => {
                tokio::time::sleep(delay).await;
                Ok(())
            }
            Some(cancel) => tokio::select! {
                biased;
                () = cancel.cancelled() => Err(ProviderError::Cancelled),
                () = tokio::time::sleep(delay) => Ok(()),
            },
        }
    }

    /// True once the cancel token fired.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Replaces the API key in `text`, by the workspace's one masking rule
    /// ([`subagent_redact::mask_literal`]: same mask, and keys shorter than
    /// [`subagent_redact::MIN_SECRET_LEN`] are placeholders, such as the
    /// `x` llama-server accepts, not masked out of every word). Only the
    /// key: a provider's message keeps its shapes; the supervisor masks
    /// those before anything is returned or recorded.
    pub(crate) fn scrub(&self, text: &str) -> String {
        match &self.secret {
            Some(key) => subagent_redact::mask_literal(text, key.expose()).into_owned(),
            None => text.to_owned(),
        }
    }

    /// `error` with the API key replaced in every text it carries.
    pub(crate) fn scrub_error(&self, error: ProviderError) -> ProviderError {
        match error {
            ProviderError::Status {
                status,
                kind,
                message,
            } => ProviderError::Status {
                status,
                kind: kind.map(|k| self.scrub(&k)),
                message: self.scrub(&message),
            },
            ProviderError::Connect { url, message } => ProviderError::Connect {
                url: self.scrub(&url),
                message: self.scrub(&message),
            },
            ProviderError::Stream(message) => ProviderError::Stream(self.scrub(&message)),
            ProviderError::InStream { kind, message } => ProviderError::InStream {
                kind: kind.map(|k| self.scrub(&k)),
                message: self.scrub(&message),
            },
            ProviderError::Invalid(message) => ProviderError::Invalid(self.scrub(&message)),
            other @ (ProviderError::Idle { .. }
            | ProviderError::TooLarge { .. }
            | ProviderError::Cancelled) => other,
        }
    }

    /// Runs `fut` under the idle limit and the cancel token.
    async fn bounded<F: Future>(&self, fut: F) -> Result<F::Output, ProviderError> {
        let timed = tokio::time::timeout(self.idle, fut);
        let result = match &self.cancel {
            None => timed.await,
            Some(cancel) => tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ProviderError::Cancelled),
                r = timed => r,
            },
        };
        result.map_err(|_| ProviderError::Idle {
            secs: self.idle.as_secs_f64().ceil().max(1.0) as u64,
        })
    }

    async fn status_failure(&self, response: reqwest::Response) -> Failure {
        let status = response.status();
        let headers = response.headers();
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let retry_after = header("retry-after-ms")
            .and_then(parse_retry_after_ms)
            .or_else(|| {
                header("retry-after")
                    .and_then(|v| parse_retry_after(v, std::time::SystemTime::now()))
            });
        let body = self.read_capped(response).await;
        let (kind, mut message) = describe_error_body(&body);
        if message.is_empty() {
            message = status.canonical_reason().unwrap_or("no message").to_owned();
        }
        if let Some(hint) = status_hint(status.as_u16()) {
            message = format!("{message} ({hint})");
        }
        let retryable = status.as_u16() == 429 || status.is_server_error();
        Failure {
            error: ProviderError::Status {
                status: status.as_u16(),
                kind,
                message: self.scrub(&message),
            },
            advice: if retryable {
                RetryAdvice::Backoff { retry_after }
            } else {
                RetryAdvice::Never
            },
        }
    }

    /// The body of an error answer, at most [`MAX_ERROR_BODY_BYTES`]; what
    /// arrived before an idle stall or a broken connection still counts.
    async fn read_capped(&self, mut response: reqwest::Response) -> String {
        let mut body = Vec::new();
        while body.len() < MAX_ERROR_BODY_BYTES {
            match self.bounded(response.chunk()).await {
                Ok(Ok(Some(chunk))) => body.extend_from_slice(&chunk),
                _ => break,
            }
        }
        body.truncate(MAX_ERROR_BODY_BYTES);
        String::from_utf8_lossy(&body).into_owned()
    }
}

/// The events of one streamed answer.
#[derive(Debug)]
pub(crate) struct EventStream {
    response: reqwest::Response,
    parser: SseParser,
    queue: VecDeque<SseEvent>,
    ended: bool,
    waits: HttpClient,
}

impl EventStream {
    /// The next event; `None` at a clean end of the stream.
    pub(crate) async fn next_event(&mut self) -> Result<Option<SseEvent>, ProviderError> {
        let mut completed = Vec::new();
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Ok(Some(event));
            }
            if self.ended {
                return Ok(None);
            }
            match self.waits.bounded(self.response.chunk()).await? {
                Ok(Some(bytes)) => {
                    self.parser
                        .push(&bytes, &mut completed)
                        .map_err(|e| ProviderError::Stream(e.to_string()))?;
                    self.queue.extend(completed.drain(..));
                }
                Ok(None) => {
                    self.ended = true;
                    let last = self
                        .parser
                        .finish()
                        .map_err(|e| ProviderError::Stream(e.to_string()))?;
                    self.queue.extend(last);
                }
                Err(e) => {
                    return Err(ProviderError::Stream(format!(
                        "the connection broke mid-stream: {}",
                        chain(&e)
                    )));
                }
            }
        }
    }
}

/// A request that got no answer: connection refused or reset is retryable,
/// anything else (TLS, bad URL) is not.
fn transport_failure(url: &str, error: &reqwest::Error) -> Failure {
    let message = chain(error);
    let transient = error.is_connect() || is_transient_io(error) || {
        // hyper's wording when a pooled keep-alive connection was closed
        // by the server just as the request went out.
        message.contains("connection closed before message completed")
    };
    let url = url.split(['?', '#']).next().unwrap_or(url).to_owned();
    let error = ProviderError::Connect { url, message };
    if transient {
        Failure {
            error,
            advice: RetryAdvice::Backoff { retry_after: None },
        }
    } else {
        Failure::fatal(error)
    }
}

fn is_transient_io(error: &(dyn std::error::Error + 'static)) -> bool {
    use std::io::ErrorKind;
    let mut source = Some(error);
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                ErrorKind::ConnectionReset
                    | ErrorKind::ConnectionRefused
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::BrokenPipe
            )
        {
            return true;
        }
        source = e.source();
    }
    false
}

/// An error and all its causes, `: `-joined (reqwest's own `Display` hides
/// the cause, which is usually the useful part).
pub(crate) fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// What to do next for statuses that have one obvious cause.
fn status_hint(status: u16) -> Option<&'static str> {
    match status {
        401 | 403 => Some("check the API key for this provider"),
        404 => Some("check the provider's base URL and the model name"),
        _ => None,
    }
}

/// The provider's error type and message from an error body. Understands
/// the OpenAI (`{"error":{"type","code","message"}}`), Anthropic
/// (`{"type":"error","error":{"type","message"}}`) and llama-server shapes;
/// anything else is returned as (shortened) text.
pub(crate) fn describe_error_body(body: &str) -> (Option<String>, String) {
    let trimmed = body.trim();
    let Ok(value) = serde_json::from_str::<serde_json::Value>(trimmed) else {
        return (None, shorten(trimmed));
    };
    let as_text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let (kind, message) = match value.get("error") {
        Some(error @ serde_json::Value::Object(_)) => (
            error
                .get("type")
                .and_then(as_text)
                .or_else(|| error.get("code").and_then(as_text)),
            error.get("message").and_then(as_text),
        ),
        Some(serde_json::Value::String(message)) => {
            (value.get("type").and_then(as_text), Some(message.clone()))
        }
        _ => (
            value
                .get("type")
                .and_then(as_text)
                .or_else(|| value.get("code").and_then(as_text)),
            value.get("message").and_then(as_text),
        ),
    };
    let message = message.unwrap_or_else(|| value.to_string());
    (kind, shorten(&message))
}

/// `text` cut to [`MAX_ERROR_MESSAGE_CHARS`] characters.
pub(crate) fn shorten(text: &str) -> String {
    subagent_protocol::text::shorten_chars(text, MAX_ERROR_MESSAGE_CHARS, "...").into_owned()
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
