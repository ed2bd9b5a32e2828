//! `openai-responses` on the wire: request shapes, the
//! `previous_response_id` continuation that sends only tool outputs, and
//! the replay fallback for servers that refuse it.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_protocol::ProviderKind;
use subagent_worker::provider::{
    ChatMessage, ChatRequest, NativeSchema, Provider, StreamDelta, ToolDefinition, TurnResponse,
};

use crate::support::loopback::{Loopback, Reply};
use crate::support::{TEST_KEY, fast_config, fixture, provider, run_turn, spec};

const FIRST_RESPONSE_ID: &str = "resp_68a1b2c3d4e5f60718293a4b5c6d7e8f0a1b2c3d4e5f6071";

fn read_tool() -> ToolDefinition {
    ToolDefinition {
        name: "bash_read".into(),
        description: "Read a file".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }
}

fn tool_request() -> ChatRequest {
    ChatRequest {
        system_prompt: "You are a code reader.".into(),
        messages: vec![ChatMessage::User {
            text: "What does main do?".into(),
        }],
        tools: vec![read_tool()],
        native_schema: None,
    }
}

/// What the agent loop appends after a tool-calling turn.
fn answer_tools(request: &mut ChatRequest, turn: &TurnResponse) {
    request.messages.push(ChatMessage::Assistant {
        text: turn.text.clone(),
        tool_calls: turn.tool_calls.clone(),
    });
    for call in &turn.tool_calls {
        request.messages.push(ChatMessage::ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            output: "fn main() { println!(\"hi\") }".into(),
            is_error: false,
        });
    }
}

fn tools_json() -> Value {
    json!([{
        "type": "function",
        "name": "bash_read",
        "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }])
}

#[tokio::test]
async fn first_turn_sends_instructions_input_and_text_format() {
    let server = Loopback::start(vec![Reply::Stream(fixture("openai_responses_text.sse"))]).await;
    let mut spec = spec(ProviderKind::OpenaiResponses, &server.base_url(), "gpt-4.1");
    spec.temperature = Some(0.7);
    spec.max_tokens = Some(100);
    let request = ChatRequest {
        system_prompt: "You are terse.".into(),
        messages: vec![ChatMessage::User { text: "Hi".into() }],
        tools: Vec::new(),
        native_schema: Some(NativeSchema {
            name: "greeting".into(),
            schema: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        }),
    };
    let mut provider = provider(&spec, fast_config());
    let (result, deltas) = run_turn(provider.as_mut(), &request).await;
    let response = result.unwrap();
    assert_eq!(response.text, "Hi there! Paris is the capital of France.");
    assert_eq!(deltas.len(), 4);

    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/responses");
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
    assert_eq!(
        sent.json(),
        json!({
            "model": "gpt-4.1",
            "input": [{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}],
            "instructions": "You are terse.",
            "stream": true,
            "store": false,
            "temperature": 0.7,
            "max_output_tokens": 100,
            "text": {"format": {
                "type": "json_schema",
                "name": "greeting",
                "schema": {"type": "object", "properties": {"text": {"type": "string"}}},
                "strict": true,
            }},
        })
    );
}

#[tokio::test]
async fn tool_turn_is_continued_with_previous_response_id_and_only_tool_outputs() {
    let server = Loopback::start(vec![
        Reply::Stream(fixture("openai_responses_tool_call.sse")),
        Reply::Stream(fixture("openai_responses_after_tool.sse")),
    ])
    .await;
    let mut spec = spec(ProviderKind::OpenaiResponses, &server.base_url(), "o4-mini");
    spec.reasoning = true;
    let mut provider = provider(&spec, fast_config());
    let mut request = tool_request();

    let (first, deltas) = run_turn(provider.as_mut(), &request).await;
    let first = first.unwrap();
    assert_eq!(first.tool_calls[0].id, "call_HK6Lz3bXt7VrMGpSf2RQhYuk");
    assert!(matches!(&deltas[0], StreamDelta::Reasoning(_)));
    answer_tools(&mut request, &first);
    let (second, _) = run_turn(provider.as_mut(), &request).await;
    assert_eq!(second.unwrap().text, "`main` prints a greeting.");

    let requests = server.requests();
    assert_eq!(
        requests[0].json(),
        json!({
            "model": "o4-mini",
            "input": [{"role": "user", "content": [{"type": "input_text", "text": "What does main do?"}]}],
            "instructions": "You are a code reader.",
            "stream": true,
            "store": true,
            "reasoning": {"effort": "high", "summary": "detailed"},
            "tools": tools_json(),
            "tool_choice": "auto",
        })
    );
    assert_eq!(
        requests[1].json(),
        json!({
            "model": "o4-mini",
            "previous_response_id": FIRST_RESPONSE_ID,
            "input": [{
                "type": "function_call_output",
                "call_id": "call_HK6Lz3bXt7VrMGpSf2RQhYuk",
                "output": "fn main() { println!(\"hi\") }",
            }],
            "instructions": "You are a code reader.",
            "stream": true,
            "store": true,
            "reasoning": {"effort": "high", "summary": "detailed"},
            "tools": tools_json(),
            "tool_choice": "auto",
        })
    );
}

#[tokio::test]
async fn server_refusing_previous_response_id_gets_the_history_replayed() {
    let refusal = r#"{"error":{"message":"previous_response_id is not supported; send the full conversation in input","type":"invalid_request_error"}}"#;
    let server = Loopback::start(vec![
        Reply::Stream(fixture("openai_responses_tool_call.sse")),
        Reply::status(400, refusal),
        Reply::Stream(fixture("openai_responses_after_tool.sse")),
    ])
    .await;
    let spec = spec(ProviderKind::OpenaiResponses, &server.base_url(), "o4-mini");
    let mut provider: Box<dyn Provider> = provider(&spec, fast_config());
    let mut request = tool_request();
    let (first, _) = run_turn(provider.as_mut(), &request).await;
    answer_tools(&mut request, &first.unwrap());
    let (second, _) = run_turn(provider.as_mut(), &request).await;
    assert_eq!(second.unwrap().text, "`main` prints a greeting.");

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        requests[1].json()["previous_response_id"],
        json!(FIRST_RESPONSE_ID)
    );
    let replay = requests[2].json();
    assert_eq!(replay.get("previous_response_id"), None);
    assert_eq!(replay["store"], json!(false));
    assert_eq!(
        replay["input"],
        json!([
            {"role": "user", "content": [{"type": "input_text", "text": "What does main do?"}]},
            {"type": "function_call", "call_id": "call_HK6Lz3bXt7VrMGpSf2RQhYuk", "name": "bash_read", "arguments": "{\"path\":\"src/main.rs\"}"},
            {"type": "function_call_output", "call_id": "call_HK6Lz3bXt7VrMGpSf2RQhYuk", "output": "fn main() { println!(\"hi\") }"},
        ])
    );
}

#[tokio::test]
async fn failed_response_is_reported_with_its_code_and_not_retried() {
    let server = Loopback::start(vec![
        Reply::Stream(fixture("openai_responses_failed.sse")),
        Reply::Stream(fixture("openai_responses_text.sse")),
    ])
    .await;
    let spec = spec(ProviderKind::OpenaiResponses, &server.base_url(), "gpt-4.1");
    let mut provider = provider(&spec, fast_config());
    let (result, _) = run_turn(provider.as_mut(), &tool_request()).await;
    let error = result.unwrap_err().to_string();
    assert_eq!(
        error,
        "provider reported an error mid-stream (server_error): The model failed to generate a response."
    );
    assert_eq!(server.requests().len(), 1);
}
