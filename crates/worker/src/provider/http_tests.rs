use std::time::Duration;

use pretty_assertions::assert_eq;

use super::*;

const KEY: &str = "sk-test-9f8e7d6c5b4a";

fn client(key: Option<&str>) -> HttpClient {
    HttpClient::new(Duration::from_secs(5), None, key.map(ApiKey::new)).unwrap()
}

#[test]
fn openai_error_body_gives_type_and_message() {
    let body = r#"{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#;
    assert_eq!(
        describe_error_body(body),
        (
            Some("requests".into()),
            "Rate limit reached for gpt-4o".into()
        )
    );
}

#[test]
fn anthropic_error_body_gives_type_and_message() {
    let body = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    assert_eq!(
        describe_error_body(body),
        (Some("overloaded_error".into()), "Overloaded".into())
    );
}

#[test]
fn llama_server_error_body_uses_its_numeric_code_only_without_type() {
    let typed = r#"{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}"#;
    assert_eq!(
        describe_error_body(typed).0.as_deref(),
        Some("exceed_context_size_error")
    );
    let untyped = r#"{"error":{"code":503,"message":"Loading model"}}"#;
    assert_eq!(
        describe_error_body(untyped),
        (Some("503".into()), "Loading model".into())
    );
}

#[test]
fn plain_string_error_and_non_json_bodies_are_kept_as_text() {
    assert_eq!(
        describe_error_body(r#"{"error":"model not found"}"#),
        (None, "model not found".into())
    );
    assert_eq!(
        describe_error_body("<html>Bad Gateway</html>\n"),
        (None, "<html>Bad Gateway</html>".into())
    );
}

#[test]
fn long_error_text_is_shortened_on_a_char_boundary() {
    let long = "é".repeat(5_000);
    let (_, message) = describe_error_body(&long);
    assert_eq!(message.chars().count(), MAX_ERROR_MESSAGE_CHARS + 3);
    assert!(message.ends_with("..."));
}

#[test]
fn scrub_masks_the_key_everywhere_in_an_error() {
    let http = client(Some(KEY));
    let error = http.scrub_error(ProviderError::Status {
        status: 401,
        kind: Some(format!("bad {KEY}")),
        message: format!("Incorrect API key provided: {KEY}. Key {KEY} is invalid."),
    });
    let text = error.to_string();
    assert!(!text.contains(KEY), "{text}");
    assert!(text.contains("Incorrect API key provided: ***."), "{text}");
}

#[test]
fn placeholder_keys_are_not_scrubbed_out_of_words() {
    let http = client(Some("x"));
    assert_eq!(http.scrub("max_tokens exceeded"), "max_tokens exceeded");
}

#[test]
fn keys_from_the_shared_minimum_length_up_are_scrubbed() {
    let at_minimum = "k".repeat(subagent_redact::MIN_SECRET_LEN);
    let below = "q".repeat(subagent_redact::MIN_SECRET_LEN - 1);
    assert_eq!(
        client(Some(&at_minimum)).scrub(&format!("bad key {at_minimum}")),
        "bad key ***"
    );
    assert_eq!(
        client(Some(&below)).scrub(&format!("bad key {below}")),
        format!("bad key {below}")
    );
}

#[test]
fn scrub_masks_only_the_key_and_leaves_other_shapes_to_the_supervisor() {
    let http = client(Some(KEY));
    assert_eq!(
        http.scrub(&format!("{KEY} and sk-proj-abcdefghijklmnopqrstuvwx")),
        "*** and sk-proj-abcdefghijklmnopqrstuvwx"
    );
}

#[test]
fn key_with_a_newline_is_refused_without_echoing_it() {
    let http = client(Some("sk-secret-value\n"));
    let error = http.secret_header("Bearer ").unwrap_err();
    let text = error.to_string();
    assert!(text.contains("not allowed in an HTTP header"), "{text}");
    assert!(!text.contains("sk-secret-value"), "{text}");
}

#[test]
fn secret_header_is_marked_sensitive() {
    let http = client(Some(KEY));
    let value = http.secret_header("Bearer ").unwrap().unwrap();
    assert!(value.is_sensitive());
    assert_eq!(value.to_str().unwrap(), format!("Bearer {KEY}"));
    assert!(client(None).secret_header("Bearer ").unwrap().is_none());
}

#[test]
fn zero_idle_timeout_is_refused() {
    let error = HttpClient::new(Duration::ZERO, None, None).unwrap_err();
    assert!(error.to_string().contains("idle timeout is zero"));
}

#[tokio::test]
async fn refused_connection_is_a_retryable_connect_error() {
    // Bind then drop to get a port nobody listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://{}/v1/chat/completions?x=1",
        listener.local_addr().unwrap()
    );
    drop(listener);
    let failure = client(None)
        .open_stream(&url, HeaderMap::new(), &serde_json::json!({}))
        .await
        .unwrap_err();
    assert_eq!(failure.advice, RetryAdvice::Backoff { retry_after: None });
    match failure.error {
        ProviderError::Connect { url, message } => {
            assert!(!url.contains('?'), "{url}");
            assert!(!message.is_empty());
        }
        other => panic!("expected a connect error, got {other:?}"),
    }
}

#[tokio::test]
async fn cancelled_token_stops_a_backoff_sleep() {
    let cancel = CancellationToken::new();
    let http = HttpClient::new(Duration::from_secs(5), Some(cancel.clone()), None).unwrap();
    cancel.cancel();
    let result = http.sleep(Duration::from_secs(3600)).await;
    assert!(matches!(result, Err(ProviderError::Cancelled)));
    assert!(http.is_cancelled());
}
