use std::time::Duration;

use pretty_assertions::assert_eq;
use subagent_protocol::ProviderKind;

use super::*;
use crate::provider::decoder_test_support::{self, Decoded, events};

fn decode(events: &[SseEvent]) -> Decoded<ResponsesDecoder> {
    decoder_test_support::decode::<ResponsesDecoder>(events)
}

fn spec() -> ProviderSpec {
    ProviderSpec {
        kind: ProviderKind::OpenaiResponses,
        base_url: "http://127.0.0.1:9/v1".into(),
        model: "o4-mini".into(),
        api_key: None,
        temperature: None,
        max_tokens: None,
        reasoning: false,
        price: None,
    }
}

fn provider(continuation: ResponsesContinuation) -> OpenAiResponses {
    let http = HttpClient::new(Duration::from_secs(5), None, None).unwrap();
    OpenAiResponses::new(spec(), http, RetryPolicy::default(), continuation).unwrap()
}

fn call(id: &str) -> ToolCallRequest {
    ToolCallRequest {
        id: id.into(),
        name: "bash_read".into(),
        arguments_json: "{}".into(),
    }
}

fn conversation() -> Vec<ChatMessage> {
    vec![
        ChatMessage::User {
            text: "read it".into(),
        },
        ChatMessage::Assistant {
            text: String::new(),
            tool_calls: vec![call("call_1")],
        },
        ChatMessage::ToolResult {
            call_id: "call_1".into(),
            name: "bash_read".into(),
            output: "fn main() {}".into(),
            is_error: false,
        },
    ]
}

fn request(messages: Vec<ChatMessage>) -> ChatRequest {
    ChatRequest {
        system_prompt: String::new(),
        messages,
        tools: Vec::new(),
        native_schema: None,
    }
}

fn stored_after_first_turn(provider: &mut OpenAiResponses) {
    provider.stored = Some(StoredTurn {
        response_id: "resp_1".into(),
        sent: conversation()[..1].to_vec(),
        reply_call_ids: vec!["call_1".into()],
    });
}

#[test]
fn text_stream_gives_text_response_id_and_usage() {
    let (decoded, deltas) = decode(&events(include_bytes!(
        "../../tests/fixtures/openai_responses_text.sse"
    )));
    let (response, id) = decoded.unwrap();
    assert_eq!(
        id.as_deref(),
        Some("resp_67c9fdcecf488190bdd9a0409de3a1ec07b8b0ad4e5eb654")
    );
    assert_eq!(response.text, "Hi there! Paris is the capital of France.");
    assert_eq!(response.id, id, "the turn's id is the response's");
    assert_eq!(deltas.len(), 4);
    assert_eq!(response.stop_reason, "completed");
    assert_eq!((response.usage.input, response.usage.output), (37, 11));
}

#[test]
fn function_call_stream_gives_call_reasoning_and_cached_usage() {
    let (decoded, deltas) = decode(&events(include_bytes!(
        "../../tests/fixtures/openai_responses_tool_call.sse"
    )));
    let (response, _) = decoded.unwrap();
    assert_eq!(
        response.tool_calls,
        vec![ToolCallRequest {
            id: "call_HK6Lz3bXt7VrMGpSf2RQhYuk".into(),
            name: "bash_read".into(),
            arguments_json: r#"{"path":"src/main.rs"}"#.into(),
        }]
    );
    assert!(matches!(&deltas[0], StreamDelta::Reasoning(r) if r.starts_with("**Reading")));
    assert_eq!(
        (
            response.usage.input,
            response.usage.cache_read,
            response.usage.output
        ),
        (2105 - 1920, 1920, 154)
    );
}

#[test]
fn failed_response_is_an_in_stream_error_with_its_code() {
    let (decoded, _) = decode(&events(include_bytes!(
        "../../tests/fixtures/openai_responses_failed.sse"
    )));
    match decoded {
        Err(ProviderError::InStream { kind, message }) => {
            assert_eq!(kind.as_deref(), Some("server_error"));
            assert_eq!(message, "The model failed to generate a response.");
        }
        other => panic!("expected an in-stream error, got {other:?}"),
    }
}

#[test]
fn error_event_is_an_in_stream_error() {
    let event = SseEvent {
        event: "error".into(),
        data: r#"{"type":"error","sequence_number":3,"code":"rate_limit_exceeded","message":"Slow down","param":null}"#.into(),
    };
    let (decoded, _) = decode(&[event]);
    assert!(matches!(
        decoded,
        Err(ProviderError::InStream { kind: Some(k), message }) if k == "rate_limit_exceeded" && message == "Slow down"
    ));
}

#[test]
fn stream_without_completed_is_incomplete() {
    let mut all = events(include_bytes!(
        "../../tests/fixtures/openai_responses_text.sse"
    ));
    all.pop();
    let (decoded, _) = decode(&all);
    assert!(matches!(decoded, Err(ProviderError::Stream(m)) if m.contains("response.completed")));
}

#[test]
fn incomplete_response_reports_its_reason() {
    let event = SseEvent {
        event: String::new(),
        data: r#"{"type":"response.incomplete","response":{"id":"resp_9","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":5,"output_tokens":7}}}"#.into(),
    };
    let (response, id) = decode(&[event]).0.unwrap();
    assert_eq!(response.stop_reason, "max_output_tokens");
    assert_eq!(id.as_deref(), Some("resp_9"));
}

#[test]
fn continuation_sends_only_what_follows_the_stored_turn() {
    let mut provider = provider(ResponsesContinuation::PreviousResponseId);
    stored_after_first_turn(&mut provider);
    assert_eq!(
        provider.plan(&request(conversation())),
        InputPlan {
            previous_response_id: Some("resp_1".into()),
            first_new: 2,
        }
    );
}

#[test]
fn rewritten_history_is_replayed_whole() {
    let mut provider = provider(ResponsesContinuation::PreviousResponseId);
    stored_after_first_turn(&mut provider);
    let mut messages = conversation();
    messages[0] = ChatMessage::User {
        text: "something else".into(),
    };
    let replay = InputPlan {
        previous_response_id: None,
        first_new: 0,
    };
    assert_eq!(provider.plan(&request(messages)), replay);
    // An assistant turn other than the stored one.
    let mut messages = conversation();
    messages[1] = ChatMessage::Assistant {
        text: String::new(),
        tool_calls: vec![call("call_other")],
    };
    assert_eq!(provider.plan(&request(messages)), replay);
    // Nothing new after the assistant turn.
    assert_eq!(
        provider.plan(&request(conversation()[..2].to_vec())),
        replay
    );
}

#[test]
fn replay_mode_never_continues() {
    let mut provider = provider(ResponsesContinuation::ReplayHistory);
    stored_after_first_turn(&mut provider);
    assert_eq!(
        provider.plan(&request(conversation())).previous_response_id,
        None
    );
}

#[test]
fn replayed_history_maps_every_message_to_input_items() {
    let mut messages = conversation();
    messages.insert(
        2,
        ChatMessage::Assistant {
            text: "Reading.".into(),
            tool_calls: Vec::new(),
        },
    );
    let plan = InputPlan {
        previous_response_id: None,
        first_new: 0,
    };
    let body = request_body(&spec(), &request(messages), &plan, false);
    assert_eq!(
        body["input"],
        json!([
            {"role": "user", "content": [{"type": "input_text", "text": "read it"}]},
            {"type": "function_call", "call_id": "call_1", "name": "bash_read", "arguments": "{}"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Reading."}]},
            {"type": "function_call_output", "call_id": "call_1", "output": "fn main() {}"},
        ])
    );
    assert!(body.get("previous_response_id").is_none());
    assert!(body.get("reasoning").is_none());
}

#[test]
fn continuation_rejections_are_recognised() {
    assert!(rejects_continuation(
        "previous_response_id is not supported; send the full conversation"
    ));
    assert!(rejects_continuation(
        "Previous response with id 'resp_1' not found."
    ));
    assert!(!rejects_continuation("Invalid value for temperature"));
}
