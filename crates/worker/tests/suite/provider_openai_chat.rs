//! `openai-chat` on the wire: the request body and headers it sends, and
//! what it makes of recorded Chat Completions streams served in random
//! pieces.

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_protocol::ProviderKind;
use subagent_worker::provider::{
    ChatMessage, ChatRequest, NativeSchema, StreamDelta, ToolCallRequest, ToolDefinition,
};

use crate::support::loopback::{Loopback, Reply};
use crate::support::{
    TEST_KEY, ask, fast_config, fixture, provider, run_turn, spec, streamed_text,
};

fn read_tool() -> ToolDefinition {
    ToolDefinition {
        name: "bash_read".into(),
        description: "Read a file".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }
}

#[tokio::test]
async fn request_carries_history_tools_and_schema_in_chat_shape() {
    let server = Loopback::start(vec![Reply::Stream(fixture("openai_chat_tool_calls.sse"))]).await;
    let mut spec = spec(ProviderKind::OpenaiChat, &server.base_url(), "gpt-4o-mini");
    spec.temperature = Some(0.2);
    spec.max_tokens = Some(256);
    let request = ChatRequest {
        system_prompt: "You are terse.".into(),
        messages: vec![
            ChatMessage::User {
                text: "Where is main?".into(),
            },
            ChatMessage::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCallRequest {
                    id: "call_a".into(),
                    name: "bash_read".into(),
                    arguments_json: r#"{"path":"lib.rs"}"#.into(),
                }],
            },
            ChatMessage::ToolResult {
                call_id: "call_a".into(),
                name: "bash_read".into(),
                output: "no such file".into(),
                is_error: true,
            },
        ],
        tools: vec![read_tool()],
        native_schema: Some(NativeSchema {
            name: "answer".into(),
            schema: json!({"type": "object", "properties": {"file": {"type": "string"}}}),
        }),
    };
    let mut provider = provider(&spec, fast_config());
    let (result, _) = run_turn(provider.as_mut(), &request).await;
    let response = result.unwrap();

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("accept"), Some("text/event-stream"));
    assert_eq!(
        sent.json(),
        json!({
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Where is main?"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "bash_read", "arguments": "{\"path\":\"lib.rs\"}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_a", "content": "no such file"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "temperature": 0.2,
            "max_tokens": 256,
            "tools": [{"type": "function", "function": {
                "name": "bash_read",
                "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            }}],
            "tool_choice": "auto",
            "response_format": {"type": "json_schema", "json_schema": {
                "name": "answer",
                "schema": {"type": "object", "properties": {"file": {"type": "string"}}},
                "strict": true,
            }},
        })
    );
    assert_eq!(response.stop_reason, "tool_calls");
    let names: Vec<&str> = response
        .tool_calls
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["bash_read", "bash_ripgrep"]);
    assert_eq!(
        response.tool_calls[0].arguments_json,
        r#"{"path": "src/main.rs"}"#
    );
}

#[tokio::test]
async fn text_turn_streams_deltas_and_reports_cached_usage() {
    let server = Loopback::start(vec![Reply::Stream(fixture("openai_chat_text.sse"))]).await;
    let spec = spec(ProviderKind::OpenaiChat, &server.base_url(), "gpt-4o");
    let mut provider = provider(&spec, fast_config());
    let (result, deltas) = run_turn(provider.as_mut(), &ask("Capital of France?")).await;
    let response = result.unwrap();
    assert_eq!(streamed_text(&deltas), response.text);
    assert_eq!(
        response.text,
        "The capital of France is Paris — café capital ☕."
    );
    assert_eq!(
        (
            response.usage.input,
            response.usage.cache_read,
            response.usage.output
        ),
        (226, 1024, 14)
    );
    assert_eq!(response.model.as_deref(), Some("gpt-4o-2024-08-06"));
}

#[tokio::test]
async fn llama_server_turn_without_a_key_sends_the_minimal_body() {
    let server = Loopback::start(vec![Reply::Stream(fixture(
        "llama_server_chat_reasoning.sse",
    ))])
    .await;
    let mut spec = spec(
        ProviderKind::OpenaiChat,
        &server.base_url(),
        "SmolLM2-135M-Instruct",
    );
    spec.api_key = None;
    let mut provider = provider(&spec, fast_config());
    let (result, deltas) = run_turn(provider.as_mut(), &ask("Hi")).await;
    assert_eq!(result.unwrap().text, "Hello! How can I help?");
    assert!(matches!(&deltas[0], StreamDelta::Reasoning(r) if r == "The user greets me."));
    let sent = &server.requests()[0];
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.json(),
        json!({
            "model": "SmolLM2-135M-Instruct",
            "messages": [{"role": "user", "content": "Hi"}],
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
}

#[tokio::test]
async fn crlf_line_endings_give_the_same_turn() {
    let crlf = String::from_utf8(fixture("openai_chat_tool_calls.sse"))
        .unwrap()
        .replace('\n', "\r\n");
    let server = Loopback::start(vec![
        Reply::Stream(fixture("openai_chat_tool_calls.sse")),
        Reply::Stream(crlf.into_bytes()),
    ])
    .await;
    let spec = spec(ProviderKind::OpenaiChat, &server.base_url(), "gpt-4o-mini");
    let mut provider = provider(&spec, fast_config());
    let (lf, _) = run_turn(provider.as_mut(), &ask("x")).await;
    let (crlf, _) = run_turn(provider.as_mut(), &ask("x")).await;
    assert_eq!(lf.unwrap(), crlf.unwrap());
}
