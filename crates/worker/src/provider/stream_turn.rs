//! One streamed model turn with retries, shared by every dialect.
//!
//! A dialect supplies the request (URL, headers, JSON body) and a
//! [`TurnDecoder`] that turns SSE events into deltas and a result; this
//! module sends, pumps events, and decides about retries. The rules:
//! retry only what [`super::http`] or an in-stream "overloaded" error marks
//! transient, at most [`RetryPolicy::max_attempts`] attempts, never after an
//! idle timeout or a cancel, and never once a delta reached the caller (a
//! retry would show the caller the same text twice). One answer may stream
//! at most [`MAX_TURN_STREAM_BYTES`]; a longer one is stopped there.

use reqwest::header::HeaderMap;

use super::http::{Failure, HttpClient, RetryAdvice};
use super::retry::{Retries, RetryNotice};
use super::sse::SseEvent;
use super::{ProviderError, StreamDelta};

/// In-stream error types that mean "try again later" rather than "your
/// request is wrong" (Anthropic sends `overloaded_error` mid-stream with a
/// 200 status).
const TRANSIENT_IN_STREAM_KINDS: [&str; 2] = ["overloaded_error", "rate_limit_error"];

/// Most bytes of event data one model turn may stream, 8 MiB. Real models
/// stop far below it (128k output tokens are about 0.5 MiB of text), and
/// the turn's text must fit whole in a protocol frame (16 MiB: the
/// assistant message and `Done` carry it): a stream past this is runaway
/// or hostile, and is stopped here instead of buffered.
pub const MAX_TURN_STREAM_BYTES: usize = 8 * 1024 * 1024;

/// Whether a turn's stream goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Progress {
    /// Keep reading.
    More,
    /// The terminal event arrived; stop reading.
    Done,
}

/// Turns one dialect's events into deltas and a turn result.
pub(crate) trait TurnDecoder {
    /// What a finished turn yields (a `TurnResponse`, plus dialect state).
    type Output;

    /// Handles one event, reporting deltas through `on_delta`.
    fn on_event(
        &mut self,
        event: &SseEvent,
        on_delta: &mut dyn FnMut(StreamDelta),
    ) -> Result<Progress, ProviderError>;

    /// The result, at the terminal event or at a clean end of the stream
    /// (the decoder decides whether ending there is complete).
    fn finish(self) -> Result<Self::Output, ProviderError>;
}

/// Sends one request and streams its answer through a fresh decoder from
/// `new_decoder`, retrying transient failures per `retries.policy` and
/// recording each retry in `retries`.
///
/// Every error returned has the API key scrubbed. When retries ran out, the
/// message says how many attempts were made.
pub(crate) async fn stream_turn<D: TurnDecoder>(
    http: &HttpClient,
    retries: &mut Retries,
    url: &str,
    headers: &HeaderMap,
    body: &serde_json::Value,
    mut new_decoder: impl FnMut() -> D,
    on_delta: &mut (dyn FnMut(StreamDelta) + Send),
) -> Result<D::Output, ProviderError> {
    let max_attempts = retries.policy.max_attempts.max(1);
    let mut attempt = 1;
    loop {
        let mut delivered = false;
        let failure = match one_attempt(
            http,
            url,
            headers.clone(),
            body,
            new_decoder(),
            on_delta,
            &mut delivered,
        )
        .await
        {
            Ok(output) => return Ok(output),
            Err(failure) => failure,
        };
        let retry_after = match failure.advice {
            RetryAdvice::Backoff { retry_after } if !delivered && !http.is_cancelled() => {
                retry_after
            }
            _ => return Err(http.scrub_error(failure.error)),
        };
        if attempt >= max_attempts {
            return Err(http.scrub_error(gave_up(failure.error, attempt)));
        }
        let delay = retries.policy.delay_after(attempt, retry_after);
        retries.record(RetryNotice {
            attempt,
            max_attempts,
            delay,
            error: http.scrub_error(failure.error).to_string(),
        });
        http.sleep(delay).await?;
        attempt += 1;
    }
}

async fn one_attempt<D: TurnDecoder>(
    http: &HttpClient,
    url: &str,
    headers: HeaderMap,
    body: &serde_json::Value,
    mut decoder: D,
    on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    delivered: &mut bool,
) -> Result<D::Output, Failure> {
    let mut events = http.open_stream(url, headers, body).await?;
    let mut streamed = 0usize;
    loop {
        let Some(event) = events.next_event().await.map_err(Failure::fatal)? else {
            break;
        };
        streamed = streamed.saturating_add(event.event.len() + event.data.len());
        if streamed > MAX_TURN_STREAM_BYTES {
            return Err(Failure::fatal(ProviderError::TooLarge {
                limit_bytes: MAX_TURN_STREAM_BYTES,
            }));
        }
        let progress = {
            let mut tracked = |delta: StreamDelta| {
                *delivered = true;
                on_delta(delta);
            };
            decoder.on_event(&event, &mut tracked)
        };
        match progress {
            Ok(Progress::More) => {}
            Ok(Progress::Done) => break,
            Err(error) => return Err(in_stream_failure(error)),
        }
    }
    decoder.finish().map_err(Failure::fatal)
}

/// An error event inside the stream is retryable only when the provider
/// called it an overload or a rate limit.
fn in_stream_failure(error: ProviderError) -> Failure {
    let transient = matches!(
        &error,
        ProviderError::InStream { kind: Some(kind), .. }
            if TRANSIENT_IN_STREAM_KINDS.contains(&kind.as_str())
    );
    if transient {
        Failure {
            error,
            advice: RetryAdvice::Backoff { retry_after: None },
        }
    } else {
        Failure::fatal(error)
    }
}

/// `error` with the attempt count appended to its message.
fn gave_up(error: ProviderError, attempts: u32) -> ProviderError {
    if attempts <= 1 {
        return error;
    }
    let note = format!(" (gave up after {attempts} attempts)");
    match error {
        ProviderError::Status {
            status,
            kind,
            message,
        } => ProviderError::Status {
            status,
            kind,
            message: message + &note,
        },
        ProviderError::Connect { url, message } => ProviderError::Connect {
            url,
            message: message + &note,
        },
        ProviderError::InStream { kind, message } => ProviderError::InStream {
            kind,
            message: message + &note,
        },
        other => other,
    }
}

/// Most characters of an event's data quoted in a decoding error.
const MAX_QUOTED_EVENT_CHARS: usize = 300;

/// The string at `key` of a JSON object, if it is one.
pub(crate) fn text_of<'v>(value: &'v serde_json::Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(serde_json::Value::as_str)
}

/// Parses an event's JSON `data` as `T`; `what` names the event for the
/// error message ("a chat.completion.chunk").
pub(crate) fn decode_event<T: serde::de::DeserializeOwned>(
    event: &SseEvent,
    what: &str,
) -> Result<T, ProviderError> {
    serde_json::from_str(&event.data).map_err(|e| {
        let quoted = subagent_protocol::text::prefix_chars(&event.data, MAX_QUOTED_EVENT_CHARS);
        let more = if quoted.len() < event.data.len() {
            "..."
        } else {
            ""
        };
        ProviderError::Stream(format!(
            "invalid JSON in {what} event ({e}); the event data was: {quoted}{more}"
        ))
    })
}

/// A temperature as JSON, written the way the user wrote it (`0.2`, not the
/// `0.20000000298023224` a direct `f32` to `f64` conversion gives).
pub(crate) fn temperature_json(temperature: f32) -> serde_json::Value {
    let shortest = temperature.to_string();
    match shortest.parse::<f64>() {
        Ok(value) => serde_json::json!(value),
        Err(_) => serde_json::json!(f64::from(temperature)),
    }
}

/// `base_url` with `path` appended, after checking it is an http(s) URL.
pub(crate) fn endpoint(base_url: &str, path: &str) -> Result<String, ProviderError> {
    let parsed = reqwest::Url::parse(base_url).map_err(|e| {
        ProviderError::Invalid(format!(
            "base URL {base_url:?} is not a URL ({e}); expected e.g. https://api.openai.com/v1"
        ))
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ProviderError::Invalid(format!(
            "base URL {base_url:?} must start with http:// or https://"
        )));
    }
    Ok(format!("{}/{path}", base_url.trim_end_matches('/')))
}
