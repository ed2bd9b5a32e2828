use pretty_assertions::assert_eq;
use subagent_protocol::ProviderKind;

use super::*;
use crate::provider::decoder_test_support::{self, Decoded, events};

fn decode(events: &[SseEvent]) -> Decoded<AnthropicDecoder> {
    decoder_test_support::decode::<AnthropicDecoder>(events)
}

fn spec() -> ProviderSpec {
    ProviderSpec {
        kind: ProviderKind::Anthropic,
        base_url: "https://api.anthropic.com/v1".into(),
        model: "claude-sonnet-4-5".into(),
        api_key: None,
        temperature: Some(0.2),
        max_tokens: None,
        reasoning: false,
        price: None,
    }
}

fn request(messages: Vec<ChatMessage>) -> ChatRequest {
    ChatRequest {
        system_prompt: String::new(),
        messages,
        tools: Vec::new(),
        native_schema: None,
    }
}

fn tool_result(call_id: &str, output: &str, is_error: bool) -> ChatMessage {
    ChatMessage::ToolResult {
        call_id: call_id.into(),
        name: "bash_find".into(),
        output: output.into(),
        is_error,
    }
}

#[test]
fn tool_use_stream_gives_text_call_stop_reason_and_cache_usage() {
    let (decoded, deltas) = decode(&events(include_bytes!(
        "../../tests/fixtures/anthropic_tool_use.sse"
    )));
    let (response, thinking) = decoded.unwrap();
    assert_eq!(response.text, "Okay, let me look for the Rust files.");
    assert_eq!(deltas.len(), 2);
    assert_eq!(
        response.tool_calls,
        vec![ToolCallRequest {
            id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
            name: "bash_find".into(),
            arguments_json: r#"{"pattern": "*.rs", "max_depth": 3}"#.into(),
        }]
    );
    assert_eq!(response.stop_reason, "tool_use");
    assert_eq!(response.id.as_deref(), Some("msg_01XFDUDYJgAACzvnptvVoYEL"));
    assert_eq!(
        response.model.as_deref(),
        Some("claude-sonnet-4-5-20250929")
    );
    let usage = response.usage;
    assert_eq!(
        (
            usage.input,
            usage.cache_read,
            usage.cache_write,
            usage.output
        ),
        (472, 2048, 0, 89)
    );
    assert!(thinking.is_empty());
}

#[test]
fn thinking_stream_reports_reasoning_and_keeps_the_signed_block() {
    let (decoded, deltas) = decode(&events(include_bytes!(
        "../../tests/fixtures/anthropic_thinking.sse"
    )));
    let (response, thinking) = decoded.unwrap();
    assert_eq!(response.text, "27 × 453 = 12,231");
    assert_eq!(
        deltas[0],
        StreamDelta::Reasoning("The user asks for 27 * 453.".into())
    );
    assert_eq!(
        thinking,
        vec![json!({
            "type": "thinking",
            "thinking": "The user asks for 27 * 453. 27 * 453 = 12231.",
            "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
        })]
    );
    assert_eq!(response.usage.cache_write, 1200);
}

#[test]
fn overloaded_error_event_is_an_in_stream_error_with_its_type() {
    let (decoded, deltas) = decode(&events(include_bytes!(
        "../../tests/fixtures/anthropic_overloaded.sse"
    )));
    assert!(deltas.is_empty());
    assert!(matches!(
        decoded,
        Err(ProviderError::InStream { kind: Some(k), message }) if k == "overloaded_error" && message == "Overloaded"
    ));
}

#[test]
fn stream_without_message_stop_is_incomplete() {
    let mut all = events(include_bytes!("../../tests/fixtures/anthropic_text.sse"));
    all.pop();
    let (decoded, _) = decode(&all);
    assert!(matches!(decoded, Err(ProviderError::Stream(m)) if m.contains("message_stop")));
}

#[test]
fn delta_for_a_block_that_never_started_is_a_stream_error() {
    let event = SseEvent {
        event: "content_block_delta".into(),
        data:
            r#"{"type":"content_block_delta","index":4,"delta":{"type":"text_delta","text":"x"}}"#
                .into(),
    };
    let (decoded, _) = decode(&[event]);
    assert!(matches!(decoded, Err(ProviderError::Stream(m)) if m.contains("block 4")));
}

#[test]
fn tool_results_and_a_following_user_text_merge_into_one_user_message() {
    let messages = vec![
        ChatMessage::User {
            text: "find rust files".into(),
        },
        ChatMessage::Assistant {
            text: String::new(),
            tool_calls: vec![
                ToolCallRequest {
                    id: "toolu_1".into(),
                    name: "bash_find".into(),
                    arguments_json: r#"{"pattern":"*.rs"}"#.into(),
                },
                ToolCallRequest {
                    id: "toolu_2".into(),
                    name: "bash_find".into(),
                    arguments_json: "not json".into(),
                },
            ],
        },
        tool_result("toolu_1", "src/main.rs", false),
        tool_result("toolu_2", "invalid arguments", true),
        ChatMessage::User {
            text: "2 turns left".into(),
        },
    ];
    let body = request_body(&spec(), &request(messages), 2048, &HashMap::new()).unwrap();
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "find rust files"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "bash_find", "input": {"pattern": "*.rs"}},
                {"type": "tool_use", "id": "toolu_2", "name": "bash_find", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "src/main.rs", "is_error": false},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "invalid arguments", "is_error": true},
                {"type": "text", "text": "2 turns left"},
            ]},
        ])
    );
    assert_eq!(body["max_tokens"], json!(DEFAULT_MAX_TOKENS));
    assert_eq!(body["temperature"], json!(0.2));
    assert!(body.get("thinking").is_none());
}

#[test]
fn thinking_blocks_go_back_with_their_tool_calling_turn() {
    let signed = json!({"type": "thinking", "thinking": "t", "signature": "s"});
    let thinking = HashMap::from([("toolu_1".to_owned(), vec![signed.clone()])]);
    let messages = vec![
        ChatMessage::User { text: "go".into() },
        ChatMessage::Assistant {
            text: "Looking.".into(),
            tool_calls: vec![ToolCallRequest {
                id: "toolu_1".into(),
                name: "bash_find".into(),
                arguments_json: "{}".into(),
            }],
        },
        tool_result("toolu_1", "none", false),
    ];
    let body = request_body(
        &ProviderSpec {
            reasoning: true,
            ..spec()
        },
        &request(messages),
        2048,
        &thinking,
    )
    .unwrap();
    assert_eq!(
        body["messages"][1]["content"][0], signed,
        "thinking must lead the assistant turn"
    );
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert!(
        body.get("temperature").is_none(),
        "temperature is refused with thinking"
    );
}

#[test]
fn thinking_with_a_tiny_max_tokens_is_refused_with_a_next_step() {
    let spec = ProviderSpec {
        reasoning: true,
        max_tokens: Some(1000),
        ..spec()
    };
    let error = request_body(&spec, &request(Vec::new()), 2048, &HashMap::new()).unwrap_err();
    assert!(error.to_string().contains("raise max_tokens"), "{error}");
}

#[test]
fn thinking_budget_stays_below_max_tokens() {
    let spec = ProviderSpec {
        reasoning: true,
        max_tokens: Some(1500),
        ..spec()
    };
    let body = request_body(&spec, &request(Vec::new()), 8000, &HashMap::new()).unwrap();
    assert_eq!(body["thinking"]["budget_tokens"], json!(1499));
}

#[test]
fn the_messages_url_is_the_same_with_or_without_v1() {
    for base_url in [
        "http://h:1",
        "http://h:1/",
        "http://h:1/v1",
        "http://h:1/v1/",
    ] {
        assert_eq!(
            messages_url(base_url).unwrap(),
            "http://h:1/v1/messages",
            "{base_url}"
        );
    }
}

#[test]
fn a_path_prefix_is_kept_in_the_messages_url() {
    for base_url in [
        "http://h:1/proxy/v1",
        "http://h:1/proxy/v1/",
        "http://h:1/proxy",
    ] {
        assert_eq!(
            messages_url(base_url).unwrap(),
            "http://h:1/proxy/v1/messages",
            "{base_url}"
        );
    }
    assert_eq!(
        messages_url("https://api.anthropic.com/v1").unwrap(),
        "https://api.anthropic.com/v1/messages"
    );
    // A host that happens to be named v1 is a host, not a version.
    assert_eq!(messages_url("http://v1").unwrap(), "http://v1/v1/messages");
}

#[test]
fn a_base_url_that_is_not_http_is_still_refused() {
    assert!(messages_url("ftp://h:1/v1").is_err());
    assert!(messages_url("not a url").is_err());
}
