//! Failures on the wire, and what the providers make of them: which are
//! retried (429 with Retry-After, 5xx, refused connections), which never
//! are (idle stalls, cancels, anything after stream bytes reached the
//! caller), and that no error ever carries the API key.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use subagent_protocol::ProviderKind;
use subagent_worker::provider::{ProviderConfig, ProviderError};
use tokio_util::sync::CancellationToken;

use crate::support::loopback::{Loopback, Reply};
use crate::support::{
    TEST_KEY, ask, fast_config, fixture, provider, run_turn, spec, streamed_text,
};

const RATE_LIMITED: &str = r#"{"error":{"message":"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 30000. Please try again in 1s.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#;
const SERVER_ERROR: &str = r#"{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}"#;

/// Idle limit of the stall tests: long enough for loopback, short enough
/// to keep the suite fast.
const SHORT_IDLE: Duration = Duration::from_millis(300);

fn chat_spec(server: &Loopback) -> subagent_protocol::ProviderSpec {
    spec(ProviderKind::OpenaiChat, &server.base_url(), "gpt-4o")
}

fn short_idle() -> ProviderConfig {
    ProviderConfig {
        idle_timeout: SHORT_IDLE,
        ..fast_config()
    }
}

/// The text fixture up to the middle of its fourth event's data line.
fn text_cut_mid_event() -> Vec<u8> {
    let full = fixture("openai_chat_text.sse");
    let fourth = full
        .windows(6)
        .enumerate()
        .filter(|(_, w)| w == b"data: ")
        .nth(3)
        .map(|(at, _)| at)
        .unwrap();
    full[..fourth + 120].to_vec()
}

#[tokio::test]
async fn rate_limit_waits_retry_after_then_succeeds() {
    let server = Loopback::start(vec![
        Reply::Status {
            status: 429,
            headers: vec![("retry-after".into(), "1".into())],
            body: RATE_LIMITED.into(),
        },
        Reply::Stream(fixture("openai_chat_text.sse")),
    ])
    .await;
    let mut provider = provider(&chat_spec(&server), fast_config());
    let (result, _) = run_turn(provider.as_mut(), &ask("x")).await;
    assert!(result.is_ok(), "{result:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let waited = requests[1].at - requests[0].at;
    // Retry-After says 1 s; the millisecond backoff would have been far
    // shorter, and nothing should wait much longer.
    assert!(waited >= Duration::from_millis(950), "waited {waited:?}");
    assert!(waited < Duration::from_secs(3), "waited {waited:?}");
}

#[tokio::test]
async fn server_error_then_success_takes_two_attempts() {
    let server = Loopback::start(vec![
        Reply::status(500, SERVER_ERROR),
        Reply::Stream(fixture("openai_chat_text.sse")),
    ])
    .await;
    let mut provider = provider(&chat_spec(&server), fast_config());
    let (result, deltas) = run_turn(provider.as_mut(), &ask("x")).await;
    assert_eq!(result.unwrap().text, streamed_text(&deltas));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn three_server_errors_give_up_with_the_status_in_the_message() {
    let server = Loopback::start(vec![
        Reply::status(500, SERVER_ERROR),
        Reply::status(502, SERVER_ERROR),
        Reply::status(500, SERVER_ERROR),
        Reply::Stream(fixture("openai_chat_text.sse")),
    ])
    .await;
    let mut provider = provider(&chat_spec(&server), fast_config());
    let (result, _) = run_turn(provider.as_mut(), &ask("x")).await;
    let error = result.unwrap_err();
    assert!(
        matches!(error, ProviderError::Status { status: 500, .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "provider returned HTTP 500 (server_error): The server had an error while processing \
         your request. (gave up after 3 attempts)"
    );
    assert_eq!(server.requests().len(), 3);
    assert_eq!(server.replies_left(), 1);
}

#[tokio::test]
async fn client_error_is_not_retried_and_says_what_to_check() {
    let unauthorized = r#"{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}"#;
    let server = Loopback::start(vec![
        Reply::status(401, unauthorized),
        Reply::Stream(fixture("openai_chat_text.sse")),
    ])
    .await;
    let mut provider = provider(&chat_spec(&server), fast_config());
    let (result, _) = run_turn(provider.as_mut(), &ask("x")).await;
    assert_eq!(
        result.unwrap_err().to_string(),
        "provider returned HTTP 401 (invalid_request_error): Incorrect API key provided. \
         (check the API key for this provider)"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn stream_cut_mid_event_is_a_stream_error_and_not_retried() {
    let server = Loopback::start(vec![
        Reply::CutAfter(text_cut_mid_event()),
        Reply::Stream(fixture("openai_chat_text.sse")),
    ])
    .await;
    let mut provider = provider(&chat_spec(&server), fast_config());
    let (result, deltas) = run_turn(provider.as_mut(), &ask("x")).await;
    let error = result.unwrap_err();
    assert!(matches!(error, ProviderError::Stream(_)), "{error:?}");
    assert_eq!(streamed_text(&deltas), "The capital of France is Paris");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn stall_mid_stream_is_an_idle_error_and_not_retried() {
    let server = Loopback::start(vec![
        Reply::Stall(fixture("openai_chat_text.sse")[..600].to_vec()),
        Reply::Stream(fixture("openai_chat_text.sse")),
    ])
    .await;
    let mut provider = provider(&chat_spec(&server), short_idle());
    let started = Instant::now();
    let (result, _) = run_turn(provider.as_mut(), &ask("x")).await;
    assert!(
        matches!(result, Err(ProviderError::Idle { secs: 1 })),
        "{result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn silence_before_the_headers_is_an_idle_error_and_not_retried() {
    let server = Loopback::start(vec![
        Reply::Silent,
        Reply::Stream(fixture("openai_chat_text.sse")),
    ])
    .await;
    let mut provider = provider(&chat_spec(&server), short_idle());
    let (result, _) = run_turn(provider.as_mut(), &ask("x")).await;
    assert_eq!(
        result.unwrap_err().to_string(),
        "no data from the provider for 1 s"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn slow_drip_within_the_idle_limit_between_chunks_succeeds() {
    let text = String::from_utf8(fixture("openai_chat_text.sse")).unwrap();
    let pieces: Vec<Vec<u8>> = text
        .split_inclusive("\n\n")
        .map(|event| event.as_bytes().to_vec())
        .collect();
    let gap = SHORT_IDLE / 3;
    // The whole answer takes longer than the idle limit; no single gap does.
    assert!(gap * pieces.len() as u32 > SHORT_IDLE);
    let server = Loopback::start(vec![Reply::Drip { pieces, gap }]).await;
    let mut provider = provider(&chat_spec(&server), short_idle());
    let (result, _) = run_turn(provider.as_mut(), &ask("x")).await;
    assert_eq!(
        result.unwrap().text,
        "The capital of France is Paris — café capital ☕."
    );
}

#[tokio::test]
async fn invalid_json_in_a_delta_is_a_clear_stream_error() {
    let broken = "data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n\
                  data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"oops}]}\n\n\
                  data: [DONE]\n\n";
    let server = Loopback::start(vec![
        Reply::Stream(broken.as_bytes().to_vec()),
        Reply::Stream(fixture("openai_chat_text.sse")),
    ])
    .await;
    let mut provider = provider(&chat_spec(&server), fast_config());
    let (result, _) = run_turn(provider.as_mut(), &ask("x")).await;
    let message = result.unwrap_err().to_string();
    assert!(
        message.starts_with(
            "malformed stream from the provider: invalid JSON in a chat.completion.chunk event"
        ),
        "{message}"
    );
    assert!(message.contains(r#"{"content":"oops}]}"#), "{message}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn refused_connection_is_retried_then_reported() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let spec = spec(
        ProviderKind::OpenaiChat,
        &format!("http://127.0.0.1:{port}/v1"),
        "gpt-4o",
    );
    let mut provider = provider(&spec, fast_config());
    let (result, _) = run_turn(provider.as_mut(), &ask("x")).await;
    let message = result.unwrap_err().to_string();
    assert!(
        message.starts_with(&format!(
            "could not reach the provider at http://127.0.0.1:{port}/v1/chat/completions"
        )),
        "{message}"
    );
    assert!(message.ends_with("(gave up after 3 attempts)"), "{message}");
}

#[tokio::test]
async fn cancel_stops_a_waiting_turn_without_retry() {
    let server = Loopback::start(vec![
        Reply::Silent,
        Reply::Stream(fixture("openai_chat_text.sse")),
    ])
    .await;
    let cancel = CancellationToken::new();
    let config = ProviderConfig {
        cancel: Some(cancel.clone()),
        ..fast_config()
    };
    let mut provider = provider(&chat_spec(&server), config);
    let request = ask("x");
    let turn = run_turn(provider.as_mut(), &request);
    let cancel_once_sent = async {
        let deadline = Instant::now() + Duration::from_secs(5);
        while server.requests().is_empty() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        cancel.cancel();
    };
    let ((result, _), ()) = tokio::join!(turn, cancel_once_sent);
    assert!(
        matches!(result, Err(ProviderError::Cancelled)),
        "{result:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn api_key_never_appears_in_any_error() {
    let echo = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {TEST_KEY}.","type":"invalid_request_error"}}}}"#
    );
    let in_stream = format!(
        "data: {{\"error\":{{\"message\":\"key {TEST_KEY} revoked\",\"type\":\"{TEST_KEY}\"}}}}\n\n"
    );
    let broken = format!("data: {{\"key\":\"{TEST_KEY}\"\n\n");
    let server = Loopback::start(vec![
        Reply::status(401, &echo),
        Reply::status(500, &echo),
        Reply::status(500, &echo),
        Reply::status(500, &echo),
        Reply::Stream(in_stream.into_bytes()),
        Reply::Stream(broken.into_bytes()),
        Reply::Status {
            status: 200,
            headers: Vec::new(),
            body: echo.clone(),
        },
    ])
    .await;
    let mut errors = Vec::new();
    // One turn per failure above (the three 500s are one retried turn).
    for _ in 0..5 {
        let mut provider = provider(&chat_spec(&server), fast_config());
        let (result, _) = run_turn(provider.as_mut(), &ask("x")).await;
        errors.push(result.unwrap_err());
    }
    assert_eq!(
        server.replies_left(),
        0,
        "every scripted failure was served"
    );
    for error in &errors {
        let shown = format!("{error} / {error:?}");
        assert!(!shown.contains(TEST_KEY), "key leaked: {shown}");
    }
    assert!(
        errors[0]
            .to_string()
            .contains("Incorrect API key provided: ***.")
    );
    assert!(matches!(errors[2], ProviderError::InStream { .. }));
    assert!(matches!(errors[3], ProviderError::Stream(_)));
    assert!(errors[4].to_string().contains("expected an event stream"));
}
