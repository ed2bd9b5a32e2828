//! `anthropic` on the wire: headers, the Messages request shape (tools,
//! `output_config`, thinking), thinking blocks sent back with their turn,
//! and retry of an overload reported before any content.

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_protocol::{ProviderKind, ProviderSpec};
use subagent_worker::provider::{ChatMessage, ChatRequest, NativeSchema, ToolDefinition};

use crate::support::loopback::{Loopback, Reply};
use crate::support::{
    TEST_KEY, ask, fast_config, fixture, provider, run_turn, spec, streamed_text,
};

fn find_tool() -> ToolDefinition {
    ToolDefinition {
        name: "bash_find".into(),
        description: "Find files".into(),
        parameters: json!({"type": "object", "properties": {"pattern": {"type": "string"}}}),
    }
}

/// A Messages API spec pointed at the loopback server.
fn claude(server: &Loopback) -> ProviderSpec {
    spec(
        ProviderKind::Anthropic,
        &server.base_url(),
        "claude-sonnet-4-5",
    )
}

#[tokio::test]
async fn request_sends_version_and_key_headers_and_messages_shape() {
    let server = Loopback::start(vec![Reply::Stream(fixture("anthropic_tool_use.sse"))]).await;
    let mut spec = claude(&server);
    spec.temperature = Some(0.5);
    let request = ChatRequest {
        system_prompt: "You find files.".into(),
        messages: vec![ChatMessage::User {
            text: "Find Rust files".into(),
        }],
        tools: vec![find_tool()],
        native_schema: Some(NativeSchema {
            name: "files".into(),
            schema: json!({"type": "object", "properties": {"files": {"type": "array"}}}),
        }),
    };
    let mut provider = provider(&spec, fast_config());
    let (result, deltas) = run_turn(provider.as_mut(), &request).await;
    let response = result.unwrap();
    assert_eq!(
        streamed_text(&deltas),
        "Okay, let me look for the Rust files."
    );
    assert_eq!(
        response.tool_calls[0].arguments_json,
        r#"{"pattern": "*.rs", "max_depth": 3}"#
    );
    assert_eq!(response.stop_reason, "tool_use");

    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some(TEST_KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.json(),
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 4096,
            "system": "You find files.",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Find Rust files"}]}],
            "stream": true,
            "temperature": 0.5,
            "tools": [{
                "name": "bash_find",
                "description": "Find files",
                "input_schema": {"type": "object", "properties": {"pattern": {"type": "string"}}},
            }],
            "output_config": {"format": {
                "type": "json_schema",
                "schema": {"type": "object", "properties": {"files": {"type": "array"}}},
            }},
        })
    );
}

#[tokio::test]
async fn thinking_blocks_of_a_tool_turn_are_sent_back_with_it() {
    let server = Loopback::start(vec![
        Reply::Stream(fixture("anthropic_thinking_tool_use.sse")),
        Reply::Stream(fixture("anthropic_text.sse")),
    ])
    .await;
    let mut spec = claude(&server);
    spec.reasoning = true;
    spec.max_tokens = Some(8192);
    let mut provider = provider(&spec, fast_config());
    let mut request = ask("Which manifests exist?");
    request.tools = vec![find_tool()];
    let (first, _) = run_turn(provider.as_mut(), &request).await;
    let first = first.unwrap();
    request.messages.push(ChatMessage::Assistant {
        text: first.text.clone(),
        tool_calls: first.tool_calls.clone(),
    });
    request.messages.push(ChatMessage::ToolResult {
        call_id: first.tool_calls[0].id.clone(),
        name: "bash_find".into(),
        output: "Cargo.toml".into(),
        is_error: false,
    });
    let (second, _) = run_turn(provider.as_mut(), &request).await;
    assert_eq!(second.unwrap().text, "Hello! Bonjour, ça va ?");

    let requests = server.requests();
    assert_eq!(
        requests[0].json()["thinking"],
        json!({"type": "enabled", "budget_tokens": 1024})
    );
    assert_eq!(
        requests[1].json()["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "Which manifests exist?"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "I need to see the file list first.", "signature": "ErUBCkYIBxgCIkB0Zq3pX9mR2sT8vW1yZ4aB6cD"},
                {"type": "tool_use", "id": "toolu_01Nd5kR7tY2wQ9xZ3bC6vM8p", "name": "bash_find", "input": {"pattern": "Cargo.toml"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01Nd5kR7tY2wQ9xZ3bC6vM8p", "content": "Cargo.toml", "is_error": false},
            ]},
        ])
    );
}

#[tokio::test]
async fn overload_reported_before_any_content_is_retried() {
    let server = Loopback::start(vec![
        Reply::Stream(fixture("anthropic_overloaded.sse")),
        Reply::Stream(fixture("anthropic_text.sse")),
    ])
    .await;
    let spec = claude(&server);
    let mut provider = provider(&spec, fast_config());
    let (result, deltas) = run_turn(provider.as_mut(), &ask("Hi")).await;
    assert_eq!(result.unwrap().text, "Hello! Bonjour, ça va ?");
    assert_eq!(streamed_text(&deltas), "Hello! Bonjour, ça va ?");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn overloaded_status_529_is_retried() {
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let server = Loopback::start(vec![
        Reply::status(529, overloaded),
        Reply::Stream(fixture("anthropic_text.sse")),
    ])
    .await;
    let spec = claude(&server);
    let mut provider = provider(&spec, fast_config());
    let (result, _) = run_turn(provider.as_mut(), &ask("Hi")).await;
    assert_eq!(result.unwrap().usage.output, 12);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn crlf_stream_gives_the_same_turn() {
    let crlf = String::from_utf8(fixture("anthropic_text.sse"))
        .unwrap()
        .replace('\n', "\r\n");
    let server = Loopback::start(vec![
        Reply::Stream(fixture("anthropic_text.sse")),
        Reply::Stream(crlf.into_bytes()),
    ])
    .await;
    let spec = spec(
        ProviderKind::Anthropic,
        &server.base_url(),
        "claude-haiku-4-5",
    );
    let mut provider = provider(&spec, fast_config());
    let (lf, _) = run_turn(provider.as_mut(), &ask("Hi")).await;
    let (crlf, _) = run_turn(provider.as_mut(), &ask("Hi")).await;
    assert_eq!(lf.unwrap(), crlf.unwrap());
}

#[tokio::test]
async fn overload_after_text_reached_the_caller_is_not_retried() {
    let text = String::from_utf8(fixture("anthropic_text.sse")).unwrap();
    let first_delta_end = text.find("event: content_block_delta").unwrap();
    let after_first_delta = first_delta_end + text[first_delta_end..].find("\n\n").unwrap() + 2;
    let stream = format!(
        "{}event: error\ndata: {{\"type\":\"error\",\"error\":{{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}}}\n\n",
        &text[..after_first_delta]
    );
    let server = Loopback::start(vec![
        Reply::Stream(stream.into_bytes()),
        Reply::Stream(fixture("anthropic_text.sse")),
    ])
    .await;
    let spec = claude(&server);
    let mut provider = provider(&spec, fast_config());
    let (result, deltas) = run_turn(provider.as_mut(), &ask("Hi")).await;
    assert_eq!(
        result.unwrap_err().to_string(),
        "provider reported an error mid-stream (overloaded_error): Overloaded"
    );
    assert_eq!(streamed_text(&deltas), "Hello");
    assert_eq!(server.requests().len(), 1);
}
