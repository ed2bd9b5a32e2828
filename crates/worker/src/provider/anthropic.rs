//! `anthropic`: the Anthropic Messages API dialect.
//!
//! Each turn POSTs the whole conversation to `{base_url}/messages` (with
//! `/v1` put in when the base URL leaves it out, see [`messages_url`]) with the
//! `x-api-key` and `anthropic-version` headers and `stream: true`, and
//! assembles the content-block event stream: text, `tool_use` blocks whose
//! input arrives as `input_json_delta` fragments, thinking blocks, the stop
//! reason and the usage split over `message_start` and `message_delta`.
//!
//! The API wants alternating roles and every `tool_result` of a turn in the
//! one user message that follows it, so consecutive tool results and user
//! texts are merged into one user message. With extended thinking on, the
//! thinking blocks of a turn that called tools must be sent back unchanged
//! with that turn; the provider keeps them, keyed by the turn's first tool
//! call id, since the provider-neutral conversation has no place for them.
//!
//! The same client serves `vertexai-anthropic`: [`super::vertex`] changes its
//! URL, key header and body.

use std::collections::{BTreeMap, HashMap};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};
use subagent_protocol::{ProviderKind, ProviderSpec, Usage};

use super::http::HttpClient;
use super::retry::{Retries, RetryNotice, RetryPolicy};
use super::sse::SseEvent;
use super::stream_turn::{
    Progress, TurnDecoder, decode_event, endpoint, stream_turn, temperature_json, text_of,
};
use super::vertex;
use super::{
    ChatMessage, ChatRequest, Provider, ProviderError, StreamDelta, ToolCallRequest, TurnFuture,
    TurnResponse, response_id,
};

/// The Messages API version this client speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Output tokens per turn when none is configured: the API requires
/// `max_tokens`, and 4096 fits every current model.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The smallest thinking budget the API accepts, in tokens.
pub const MIN_THINKING_BUDGET: u32 = 1024;

/// The Messages API client.
#[derive(Debug)]
pub(crate) struct Anthropic {
    spec: ProviderSpec,
    http: HttpClient,
    retries: Retries,
    url: String,
    thinking_budget: u32,
    /// Thinking blocks of earlier tool-calling turns, by first call id.
    thinking_by_call: HashMap<String, Vec<Value>>,
}

impl Anthropic {
    /// A client for `spec`, sending through `http`; `thinking_budget` is
    /// used when `spec.reasoning` is on.
    pub(crate) fn new(
        spec: ProviderSpec,
        http: HttpClient,
        retry: RetryPolicy,
        thinking_budget: u32,
    ) -> Result<Self, ProviderError> {
        let url = if spec.kind == ProviderKind::VertexaiAnthropic {
            vertex::stream_url(&spec.base_url, &spec.model)?
        } else {
            messages_url(&spec.base_url)?
        };
        Ok(Self {
            spec,
            http,
            retries: Retries::new(retry),
            url,
            thinking_budget,
            thinking_by_call: HashMap::new(),
        })
    }

    fn headers(&self) -> Result<HeaderMap, ProviderError> {
        if self.spec.kind == ProviderKind::VertexaiAnthropic {
            return vertex::headers(&self.http);
        }
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        if let Some(value) = self.http.secret_header("")? {
            headers.insert(HeaderName::from_static("x-api-key"), value);
        }
        Ok(headers)
    }
}

impl Provider for Anthropic {
    fn turn<'a>(
        &'a mut self,
        request: &'a ChatRequest,
        on_delta: &'a mut (dyn FnMut(StreamDelta) + Send),
    ) -> TurnFuture<'a> {
        Box::pin(async move {
            let headers = self.headers()?;
            let body = request_body(
                &self.spec,
                request,
                self.thinking_budget,
                &self.thinking_by_call,
            )?;
            let body = if self.spec.kind == ProviderKind::VertexaiAnthropic {
                vertex::into_vertex_body(body)
            } else {
                body
            };
            let (response, thinking) = stream_turn(
                &self.http,
                &mut self.retries,
                &self.url,
                &headers,
                &body,
                AnthropicDecoder::default,
                on_delta,
            )
            .await?;
            if let Some(first) = response.tool_calls.first()
                && !thinking.is_empty()
            {
                self.thinking_by_call.insert(first.id.clone(), thinking);
            }
            Ok(response)
        })
    }

    fn take_retries(&mut self) -> Vec<RetryNotice> {
        self.retries.take()
    }
}

/// The Messages endpoint under `base_url`, which may or may not end in `/v1`.
///
/// The Anthropic SDKs and Claude Code take the base URL without the version
/// (`ANTHROPIC_BASE_URL=http://127.0.0.1:8080`) and add `/v1/messages`
/// themselves, while OpenAI-style base URLs (and this crate's default) carry
/// `/v1`; both spellings name the same server, so both are accepted here,
/// where every caller of the worker passes through. Only the URL's path is
/// looked at, so a host or a prefix (`/proxy/v1`) is kept as it is.
pub(crate) fn messages_url(base_url: &str) -> Result<String, ProviderError> {
    let has_version = reqwest::Url::parse(base_url)
        .is_ok_and(|url| url.path().trim_end_matches('/').ends_with("/v1"));
    // A URL that does not parse gets endpoint()'s error, which says what is expected.
    endpoint(
        base_url,
        if has_version {
            "messages"
        } else {
            "v1/messages"
        },
    )
}

/// The JSON body of one Messages request.
pub(crate) fn request_body(
    spec: &ProviderSpec,
    request: &ChatRequest,
    thinking_budget: u32,
    thinking_by_call: &HashMap<String, Vec<Value>>,
) -> Result<Value, ProviderError> {
    let max_tokens = spec.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    let mut body = json!({
        "model": spec.model,
        "max_tokens": max_tokens,
        "messages": messages(request, thinking_by_call),
        "stream": true,
    });
    if !request.system_prompt.is_empty() {
        body["system"] = json!(request.system_prompt);
    }
    if spec.reasoning {
        if max_tokens <= MIN_THINKING_BUDGET {
            return Err(ProviderError::Invalid(format!(
                "extended thinking needs max_tokens above {MIN_THINKING_BUDGET} \
                 (it is {max_tokens}); raise max_tokens or turn reasoning off"
            )));
        }
        let budget = thinking_budget.clamp(MIN_THINKING_BUDGET, max_tokens - 1);
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    } else if let Some(temperature) = spec.temperature {
        // The API refuses a temperature together with thinking.
        body["temperature"] = temperature_json(temperature);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect();
    }
    if let Some(schema) = &request.native_schema {
        body["output_config"] = json!({"format": {"type": "json_schema", "schema": schema.schema}});
    }
    Ok(body)
}

/// The conversation as Messages API messages, consecutive same-role content
/// merged.
fn messages(request: &ChatRequest, thinking_by_call: &HashMap<String, Vec<Value>>) -> Vec<Value> {
    let mut merged: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let (role, blocks) = match message {
            ChatMessage::User { text } => ("user", text_block(text)),
            ChatMessage::Assistant { text, tool_calls } => {
                let mut blocks = tool_calls
                    .first()
                    .and_then(|call| thinking_by_call.get(&call.id))
                    .cloned()
                    .unwrap_or_default();
                blocks.extend(text_block(text));
                blocks.extend(tool_calls.iter().map(|call| {
                    json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": tool_input(&call.arguments_json),
                    })
                }));
                ("assistant", blocks)
            }
            ChatMessage::ToolResult {
                call_id,
                output,
                is_error,
                ..
            } => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": output,
                    "is_error": is_error,
                })],
            ),
        };
        // The API rejects empty messages and empty text blocks.
        if blocks.is_empty() {
            continue;
        }
        match merged.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => merged.push((role, blocks)),
        }
    }
    merged
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

fn text_block(text: &str) -> Vec<Value> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "text", "text": text})]
    }
}

/// A tool call's arguments as the object `tool_use.input` must be. Text
/// that is not a JSON object (the model wrote invalid JSON, which its tool
/// result already reported) is sent as `{}`.
fn tool_input(arguments_json: &str) -> Value {
    match serde_json::from_str::<Value>(arguments_json) {
        Ok(value @ Value::Object(_)) => value,
        _ => json!({}),
    }
}

#[derive(Debug)]
enum Block {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        input_json: String,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    /// Server tools and anything newer: not ours to assemble.
    Other,
}

/// Assembles one streamed Messages answer; yields the turn and its
/// thinking blocks (to be sent back with it).
#[derive(Debug, Default)]
pub(crate) struct AnthropicDecoder {
    blocks: BTreeMap<u64, Block>,
    usage: Usage,
    stop_reason: Option<String>,
    model: Option<String>,
    id: Option<String>,
    done: bool,
}

impl TurnDecoder for AnthropicDecoder {
    type Output = (TurnResponse, Vec<Value>);

    fn on_event(
        &mut self,
        event: &SseEvent,
        on_delta: &mut dyn FnMut(StreamDelta),
    ) -> Result<Progress, ProviderError> {
        let data: Value = decode_event(event, "a Messages API")?;
        let kind = text_of(&data, "type").unwrap_or(&event.event);
        match kind {
            "message_start" => {
                let message = data.get("message").unwrap_or(&Value::Null);
                self.model = text_of(message, "model").map(str::to_owned);
                self.id = response_id(text_of(message, "id"));
                self.note_usage(message.get("usage"));
            }
            "content_block_start" => {
                let index = block_index(&data)?;
                let block = data.get("content_block").unwrap_or(&Value::Null);
                let owned = |key| text_of(block, key).unwrap_or_default().to_owned();
                let block = match text_of(block, "type") {
                    Some("text") => {
                        let text = owned("text");
                        if !text.is_empty() {
                            on_delta(StreamDelta::Text(text.clone()));
                        }
                        Block::Text(text)
                    }
                    Some("tool_use") => Block::ToolUse {
                        id: owned("id"),
                        name: owned("name"),
                        input_json: String::new(),
                    },
                    Some("thinking") => Block::Thinking {
                        thinking: owned("thinking"),
                        signature: owned("signature"),
                    },
                    Some("redacted_thinking") => Block::RedactedThinking {
                        data: owned("data"),
                    },
                    _ => Block::Other,
                };
                self.blocks.insert(index, block);
            }
            "content_block_delta" => {
                let index = block_index(&data)?;
                let delta = data.get("delta").unwrap_or(&Value::Null);
                let Some(block) = self.blocks.get_mut(&index) else {
                    return Err(ProviderError::Stream(format!(
                        "content_block_delta for block {index}, which never started"
                    )));
                };
                apply_delta(block, delta, on_delta);
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                self.note_usage(data.get("usage"));
            }
            "message_stop" => {
                self.done = true;
                return Ok(Progress::Done);
            }
            "error" => {
                let error = data.get("error").unwrap_or(&Value::Null);
                return Err(ProviderError::InStream {
                    kind: text_of(error, "type").map(str::to_owned),
                    message: text_of(error, "message")
                        .unwrap_or("error event without a message")
                        .to_owned(),
                });
            }
            // ping, content_block_stop, and event types added later.
            _ => {}
        }
        Ok(Progress::More)
    }

    fn finish(self) -> Result<Self::Output, ProviderError> {
        if !self.done {
            return Err(ProviderError::Stream(
                "the stream ended before message_stop".into(),
            ));
        }
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        let mut thinking = Vec::new();
        for block in self.blocks.into_values() {
            match block {
                Block::Text(part) => text.push_str(&part),
                Block::ToolUse {
                    id,
                    name,
                    input_json,
                } => tool_calls.push(ToolCallRequest {
                    id,
                    name,
                    // A tool without parameters streams no input at all.
                    arguments_json: if input_json.is_empty() {
                        "{}".into()
                    } else {
                        input_json
                    },
                }),
                Block::Thinking {
                    thinking: text,
                    signature,
                } => thinking.push(json!({
                    "type": "thinking",
                    "thinking": text,
                    "signature": signature,
                })),
                Block::RedactedThinking { data } => {
                    thinking.push(json!({"type": "redacted_thinking", "data": data}));
                }
                Block::Other => {}
            }
        }
        let response = TurnResponse {
            text,
            tool_calls,
            stop_reason: self.stop_reason.unwrap_or_default(),
            usage: self.usage,
            model: self.model,
            id: self.id,
        };
        Ok((response, thinking))
    }
}

impl AnthropicDecoder {
    /// Usage arrives in parts: input and cache counts in `message_start`,
    /// the final (cumulative) output count in `message_delta`; a field
    /// present later replaces the earlier value.
    fn note_usage(&mut self, usage: Option<&Value>) {
        let Some(usage) = usage else { return };
        let count = |key: &str| usage.get(key).and_then(Value::as_u64);
        let fields = [
            (&mut self.usage.input, count("input_tokens")),
            (&mut self.usage.output, count("output_tokens")),
            (&mut self.usage.cache_read, count("cache_read_input_tokens")),
            (
                &mut self.usage.cache_write,
                count("cache_creation_input_tokens"),
            ),
        ];
        for (field, value) in fields {
            if let Some(value) = value {
                *field = value;
            }
        }
    }
}

fn block_index(data: &Value) -> Result<u64, ProviderError> {
    data.get("index").and_then(Value::as_u64).ok_or_else(|| {
        ProviderError::Stream(format!(
            "content block event without an index: {}",
            super::http::shorten(&data.to_string())
        ))
    })
}

fn apply_delta(block: &mut Block, delta: &Value, on_delta: &mut dyn FnMut(StreamDelta)) {
    let part = |key| text_of(delta, key).unwrap_or_default();
    match (text_of(delta, "type"), block) {
        (Some("text_delta"), Block::Text(text)) => {
            let part = part("text");
            if !part.is_empty() {
                text.push_str(part);
                on_delta(StreamDelta::Text(part.to_owned()));
            }
        }
        (Some("input_json_delta"), Block::ToolUse { input_json, .. }) => {
            input_json.push_str(part("partial_json"));
        }
        (Some("thinking_delta"), Block::Thinking { thinking, .. }) => {
            let part = part("thinking");
            if !part.is_empty() {
                thinking.push_str(part);
                on_delta(StreamDelta::Reasoning(part.to_owned()));
            }
        }
        (Some("signature_delta"), Block::Thinking { signature, .. }) => {
            signature.push_str(part("signature"));
        }
        // citations_delta and deltas of blocks we do not assemble.
        _ => {}
    }
}

#[cfg(test)]
#[path = "anthropic_tests.rs"]
mod tests;
