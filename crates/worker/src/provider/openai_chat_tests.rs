use pretty_assertions::assert_eq;

use super::*;
use crate::provider::RESPONSE_ID_MAX_BYTES;
use crate::provider::decoder_test_support::{self, Decoded, events};

fn decode(events: &[SseEvent]) -> Decoded<ChatDecoder> {
    decoder_test_support::decode::<ChatDecoder>(events)
}

fn data(json: &str) -> SseEvent {
    SseEvent {
        event: String::new(),
        data: json.into(),
    }
}

#[test]
fn text_stream_assembles_text_usage_and_cached_tokens() {
    let (response, deltas) = decode(&events(include_bytes!(
        "../../tests/fixtures/openai_chat_text.sse"
    )));
    let response = response.unwrap();
    let text = "The capital of France is Paris — café capital ☕.";
    assert_eq!(response.text, text);
    assert_eq!(response.stop_reason, "stop");
    assert_eq!(response.model.as_deref(), Some("gpt-4o-2024-08-06"));
    assert_eq!(
        response.id.as_deref(),
        Some("chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT")
    );
    assert_eq!(
        (
            response.usage.input,
            response.usage.cache_read,
            response.usage.output
        ),
        (1250 - 1024, 1024, 14)
    );
    let streamed: String = deltas
        .iter()
        .map(|d| match d {
            StreamDelta::Text(t) => t.as_str(),
            StreamDelta::Reasoning(_) => panic!("no reasoning in this stream"),
        })
        .collect();
    assert_eq!(streamed, text);
}

#[test]
fn tool_calls_streamed_by_index_are_assembled_in_order() {
    let (response, deltas) = decode(&events(include_bytes!(
        "../../tests/fixtures/openai_chat_tool_calls.sse"
    )));
    let response = response.unwrap();
    assert!(deltas.is_empty());
    assert_eq!(response.stop_reason, "tool_calls");
    assert_eq!(
        response.tool_calls,
        vec![
            ToolCallRequest {
                id: "call_DdmO9pD3xa9XTPNJ32zg2hcA".into(),
                name: "bash_read".into(),
                arguments_json: r#"{"path": "src/main.rs"}"#.into(),
            },
            ToolCallRequest {
                id: "call_3XhQh1cGJpbYq2mV8Zr8KuTn".into(),
                name: "bash_ripgrep".into(),
                arguments_json: r#"{"pattern": "fn main"}"#.into(),
            },
        ]
    );
}

#[test]
fn llama_server_reasoning_content_is_reported_as_reasoning() {
    let (response, deltas) = decode(&events(include_bytes!(
        "../../tests/fixtures/llama_server_chat_reasoning.sse"
    )));
    let response = response.unwrap();
    assert_eq!(response.text, "Hello! How can I help?");
    assert_eq!(
        deltas[..2],
        [
            StreamDelta::Reasoning("The user greets me.".into()),
            StreamDelta::Reasoning(" I should answer briefly.".into()),
        ]
    );
    assert_eq!((response.usage.input, response.usage.output), (41, 19));
}

#[test]
fn error_chunk_becomes_an_in_stream_error() {
    let (response, _) = decode(&events(include_bytes!(
        "../../tests/fixtures/openai_chat_error.sse"
    )));
    match response {
        Err(ProviderError::InStream { kind, message }) => {
            assert_eq!(kind.as_deref(), Some("server_error"));
            assert!(message.contains("error while processing"), "{message}");
        }
        other => panic!("expected an in-stream error, got {other:?}"),
    }
}

#[test]
fn invalid_json_names_the_event_and_quotes_it() {
    let (response, _) = decode(&[data(r#"{"choices":[{"delta":{"content":"a"#)]);
    let text = response.unwrap_err().to_string();
    assert!(
        text.starts_with(
            "malformed stream from the provider: invalid JSON in a chat.completion.chunk event"
        ),
        "{text}"
    );
    assert!(
        text.contains(r#"{"choices":[{"delta":{"content":"a"#),
        "{text}"
    );
}

#[test]
fn stream_ending_without_finish_reason_or_done_is_incomplete() {
    let (response, _) = decode(&[data(r#"{"choices":[{"index":0,"delta":{"content":"a"}}]}"#)]);
    assert!(
        matches!(response, Err(ProviderError::Stream(m)) if m.contains("before the final chunk"))
    );
}

#[test]
fn calls_without_id_or_index_or_arguments_get_defaults() {
    let (response, _) = decode(&[
        data(
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"a"}},{"function":{"name":"b","arguments":"{\"x\":1}"}}]},"finish_reason":"tool_calls"}]}"#,
        ),
        data("[DONE]"),
    ]);
    let calls = response.unwrap().tool_calls;
    assert_eq!(
        calls,
        vec![
            ToolCallRequest {
                id: "call_0".into(),
                name: "a".into(),
                arguments_json: "{}".into()
            },
            ToolCallRequest {
                id: "call_1".into(),
                name: "b".into(),
                arguments_json: r#"{"x":1}"#.into()
            },
        ]
    );
}

#[test]
fn call_without_a_name_is_a_stream_error() {
    let (response, _) = decode(&[
        data(
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#,
        ),
        data("[DONE]"),
    ]);
    assert!(matches!(response, Err(ProviderError::Stream(m)) if m.contains("no function name")));
}

#[test]
fn other_choices_than_the_first_are_ignored() {
    let (response, _) = decode(&[
        data(
            r#"{"choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"mine"},"finish_reason":"stop"}]}"#,
        ),
        data("[DONE]"),
    ]);
    assert_eq!(response.unwrap().text, "mine");
}

/// The id a stream of one text chunk with `id` and a final chunk yields.
fn id_of(id: &str) -> Option<String> {
    let first = serde_json::json!({"id": id, "choices": [{"index": 0, "delta": {"content": "x"}}]});
    let (response, _) = decode(&[
        data(&first.to_string()),
        data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#),
        data("[DONE]"),
    ]);
    response.unwrap().id
}

#[test]
fn a_response_id_is_kept_only_when_it_is_a_plain_bounded_token() {
    assert_eq!(id_of("chatcmpl-1").as_deref(), Some("chatcmpl-1"));
    let longest = "a".repeat(RESPONSE_ID_MAX_BYTES);
    assert_eq!(id_of(&longest), Some(longest.clone()));
    // From a remote server: an endless id, control characters (a forged
    // line in a log that prints it), spaces or non-ASCII are not ids, and
    // a cut one would name another response: none is kept, the turn is.
    for hostile in [
        "a".repeat(RESPONSE_ID_MAX_BYTES + 1),
        "chatcmpl-1\nWARN forged".to_owned(),
        "chatcmpl-1\u{1b}[2J".to_owned(),
        "two words".to_owned(),
        "chatcmpl-é".to_owned(),
        String::new(),
    ] {
        assert_eq!(id_of(&hostile), None, "{hostile:?}");
    }
}

#[test]
fn a_stream_without_an_id_has_none_and_a_later_chunk_does_not_change_it() {
    let (response, _) = decode(&[
        data(r#"{"choices":[{"index":0,"delta":{"content":"x"}}]}"#),
        data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#),
        data("[DONE]"),
    ]);
    assert_eq!(response.unwrap().id, None);
    let (response, _) = decode(&[
        data(r#"{"id":"first","choices":[{"index":0,"delta":{"content":"x"}}]}"#),
        data(r#"{"id":"second","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#),
        data("[DONE]"),
    ]);
    assert_eq!(response.unwrap().id.as_deref(), Some("first"));
}
