//! `openai-chat`: the OpenAI Chat Completions dialect, also spoken by
//! llama.cpp's llama-server, Ollama and vLLM.
//!
//! Each turn POSTs the whole conversation to `{base_url}/chat/completions`
//! with `stream: true` and `stream_options.include_usage`, and assembles the
//! streamed chunks: text and `reasoning_content` deltas, tool calls streamed
//! by index with their arguments in fragments, the finish reason, and the
//! closing usage chunk. Stateless: nothing is kept between turns.
//!
//! Chat Completions has no flag for a failed tool result; the tool's output
//! (which says it failed) is all the model sees.

use std::collections::BTreeMap;

use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde::Deserialize;
use serde_json::{Value, json};
use subagent_protocol::{ProviderSpec, Usage};

use super::http::{HttpClient, describe_error_body};
use super::retry::{Retries, RetryNotice, RetryPolicy};
use super::sse::SseEvent;
use super::stream_turn::{
    Progress, TurnDecoder, decode_event, endpoint, stream_turn, temperature_json,
};
use super::{
    ChatMessage, ChatRequest, Provider, ProviderError, StreamDelta, ToolCallRequest, TurnFuture,
    TurnResponse, response_id,
};

/// The Chat Completions client.
#[derive(Debug)]
pub(crate) struct OpenAiChat {
    spec: ProviderSpec,
    http: HttpClient,
    retries: Retries,
    url: String,
}

impl OpenAiChat {
    /// A client for `spec`, sending through `http`.
    pub(crate) fn new(
        spec: ProviderSpec,
        http: HttpClient,
        retry: RetryPolicy,
    ) -> Result<Self, ProviderError> {
        let url = endpoint(&spec.base_url, "chat/completions")?;
        Ok(Self {
            spec,
            http,
            retries: Retries::new(retry),
            url,
        })
    }

    fn headers(&self) -> Result<HeaderMap, ProviderError> {
        let mut headers = HeaderMap::new();
        if let Some(value) = self.http.secret_header("Bearer ")? {
            headers.insert(AUTHORIZATION, value);
        }
        Ok(headers)
    }
}

impl Provider for OpenAiChat {
    fn turn<'a>(
        &'a mut self,
        request: &'a ChatRequest,
        on_delta: &'a mut (dyn FnMut(StreamDelta) + Send),
    ) -> TurnFuture<'a> {
        Box::pin(async move {
            let headers = self.headers()?;
            let body = request_body(&self.spec, request);
            stream_turn(
                &self.http,
                &mut self.retries,
                &self.url,
                &headers,
                &body,
                ChatDecoder::default,
                on_delta,
            )
            .await
        })
    }

    fn take_retries(&mut self) -> Vec<RetryNotice> {
        self.retries.take()
    }
}

/// The JSON body of one Chat Completions request.
pub(crate) fn request_body(spec: &ProviderSpec, request: &ChatRequest) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system_prompt.is_empty() {
        messages.push(json!({"role": "system", "content": request.system_prompt}));
    }
    for message in &request.messages {
        messages.push(match message {
            ChatMessage::User { text } => json!({"role": "user", "content": text}),
            ChatMessage::Assistant { text, tool_calls } if tool_calls.is_empty() => {
                json!({"role": "assistant", "content": text})
            }
            ChatMessage::Assistant { text, tool_calls } => json!({
                "role": "assistant",
                // OpenAI wants null rather than "" beside tool calls.
                "content": if text.is_empty() { Value::Null } else { json!(text) },
                "tool_calls": tool_calls.iter().map(|call| json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_json},
                })).collect::<Vec<_>>(),
            }),
            ChatMessage::ToolResult {
                call_id, output, ..
            } => json!({"role": "tool", "tool_call_id": call_id, "content": output}),
        });
    }
    let mut body = json!({
        "model": spec.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if let Some(temperature) = spec.temperature {
        body["temperature"] = temperature_json(temperature);
    }
    if let Some(max_tokens) = spec.max_tokens {
        body["max_tokens"] = json!(max_tokens);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                })
            })
            .collect();
        body["tool_choice"] = json!("auto");
    }
    if let Some(schema) = &request.native_schema {
        body["response_format"] = json!({
            "type": "json_schema",
            "json_schema": {"name": schema.name, "schema": schema.schema, "strict": true},
        });
    }
    body
}

#[derive(Deserialize)]
struct Chunk {
    choices: Option<Vec<Choice>>,
    usage: Option<ChunkUsage>,
    model: Option<String>,
    /// The completion's id, the same on every chunk.
    id: Option<String>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    index: Option<u32>,
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    content: Option<String>,
    /// llama-server, vLLM and DeepSeek name reasoning text this way.
    reasoning_content: Option<String>,
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    index: Option<u32>,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct ChunkUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptTokensDetails>,
}

#[derive(Deserialize)]
struct PromptTokensDetails {
    cached_tokens: Option<u64>,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Assembles one streamed Chat Completions answer.
#[derive(Debug, Default)]
pub(crate) struct ChatDecoder {
    text: String,
    calls: BTreeMap<u32, PartialCall>,
    finish_reason: Option<String>,
    usage: Usage,
    model: Option<String>,
    id: Option<String>,
    done: bool,
}

impl TurnDecoder for ChatDecoder {
    type Output = TurnResponse;

    fn on_event(
        &mut self,
        event: &SseEvent,
        on_delta: &mut dyn FnMut(StreamDelta),
    ) -> Result<Progress, ProviderError> {
        if event.is_done() {
            self.done = true;
            return Ok(Progress::Done);
        }
        let chunk: Chunk = decode_event(event, "a chat.completion.chunk")?;
        if chunk.error.is_some() {
            let (kind, message) = describe_error_body(&event.data);
            return Err(ProviderError::InStream { kind, message });
        }
        if self.model.is_none() {
            self.model = chunk.model;
        }
        if self.id.is_none() {
            self.id = response_id(chunk.id.as_deref());
        }
        // Only the first choice is ours: the request never asks for `n`.
        for choice in chunk.choices.unwrap_or_default() {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.delta {
                self.apply(delta, on_delta);
            }
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
            }
        }
        if let Some(usage) = chunk.usage {
            let prompt = usage.prompt_tokens.unwrap_or(0);
            let cached = usage
                .prompt_tokens_details
                .and_then(|d| d.cached_tokens)
                .unwrap_or(0);
            self.usage.input = prompt.saturating_sub(cached);
            self.usage.cache_read = cached;
            self.usage.output = usage.completion_tokens.unwrap_or(0);
        }
        Ok(Progress::More)
    }

    fn finish(self) -> Result<TurnResponse, ProviderError> {
        if !self.done && self.finish_reason.is_none() {
            return Err(ProviderError::Stream(
                "the stream ended before the final chunk (no finish_reason and no [DONE])".into(),
            ));
        }
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (index, call) in self.calls {
            if call.name.is_empty() {
                return Err(ProviderError::Stream(format!(
                    "tool call #{index} in the stream has no function name"
                )));
            }
            tool_calls.push(ToolCallRequest {
                id: if call.id.is_empty() {
                    format!("call_{index}")
                } else {
                    call.id
                },
                name: call.name,
                // A call without arguments is a call with no arguments.
                arguments_json: if call.arguments.is_empty() {
                    "{}".into()
                } else {
                    call.arguments
                },
            });
        }
        Ok(TurnResponse {
            text: self.text,
            tool_calls,
            stop_reason: self.finish_reason.unwrap_or_default(),
            usage: self.usage,
            model: self.model,
            id: self.id,
        })
    }
}

impl ChatDecoder {
    fn apply(&mut self, delta: Delta, on_delta: &mut dyn FnMut(StreamDelta)) {
        if let Some(reasoning) = delta.reasoning_content.filter(|r| !r.is_empty()) {
            on_delta(StreamDelta::Reasoning(reasoning));
        }
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            self.text.push_str(&text);
            on_delta(StreamDelta::Text(text));
        }
        for (position, call) in delta.tool_calls.unwrap_or_default().into_iter().enumerate() {
            let index = call
                .index
                .unwrap_or_else(|| u32::try_from(position).unwrap_or(u32::MAX));
            let partial = self.calls.entry(index).or_default();
            if let Some(id) = call.id.filter(|id| !id.is_empty()) {
                partial.id = id;
            }
            if let Some(function) = call.function {
                if let Some(name) = function.name.filter(|_| partial.name.is_empty()) {
                    partial.name = name;
                }
                if let Some(arguments) = function.arguments {
                    partial.arguments.push_str(&arguments);
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "openai_chat_tests.rs"]
mod tests;
