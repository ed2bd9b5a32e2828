//! `openai-responses`: the OpenAI Responses API dialect.
//!
//! Each turn POSTs to `{base_url}/responses` with the system prompt as
//! `instructions`, the conversation as `input` items and `stream: true`, and
//! assembles the typed event stream (`response.output_text.delta`,
//! `response.function_call_arguments.delta`, `response.completed`, ...).
//!
//! # Continuation and `store`
//!
//! The Responses API can continue a conversation server-side: a request with
//! `previous_response_id` sends only the new input items (the tool outputs).
//! A server can only resolve that id if it stored the earlier response, and
//! `store: false` (the default of the seed contract) forbids that. So, in
//! [`ResponsesContinuation::PreviousResponseId`] mode (the default):
//! - a request that offers tools, and so may need a continuation, is sent
//!   with `store: true`; a request without tools (a plain text turn, as
//!   llama-server serves) with `store: false`;
//! - the next request continues with `previous_response_id` and only the
//!   messages added since, when the stored response exists and the
//!   conversation still starts with exactly what was sent plus the
//!   assistant turn it produced;
//! - otherwise (no stored response, or the history was rewritten) the whole
//!   history is replayed as input items with no `previous_response_id`;
//! - a server that rejects `previous_response_id` with a 400 (stateless
//!   servers and proxies do) gets the same turn replayed at once, and the
//!   provider stays in replay mode for the rest of the run.
//!
//! [`ResponsesContinuation::ReplayHistory`] always sends `store: false` and
//! the whole history (for zero-data-retention accounts and stateless
//! servers). Replayed history carries no reasoning items, so a reasoning
//! model re-reasons from the visible conversation.

use std::collections::BTreeMap;

use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::{Value, json};
use subagent_protocol::{ProviderSpec, Usage};

use super::http::HttpClient;
use super::retry::{Retries, RetryNotice, RetryPolicy};
use super::sse::SseEvent;
use super::stream_turn::{
    Progress, TurnDecoder, decode_event, endpoint, stream_turn, temperature_json, text_of,
};
use super::{
    ChatMessage, ChatRequest, Provider, ProviderError, StreamDelta, ToolCallRequest, TurnFuture,
    TurnResponse, response_id,
};

/// How the `openai-responses` provider carries the conversation from one
/// turn to the next (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResponsesContinuation {
    /// `store: true` when tools are offered, then `previous_response_id`
    /// with only the new tool outputs; falls back to replay when the server
    /// refuses the id.
    #[default]
    PreviousResponseId,
    /// `store: false` always; the whole history is sent every turn.
    ReplayHistory,
}

/// The Responses API client; keeps the id of the last stored response.
#[derive(Debug)]
pub(crate) struct OpenAiResponses {
    spec: ProviderSpec,
    http: HttpClient,
    retries: Retries,
    url: String,
    continuation: ResponsesContinuation,
    stored: Option<StoredTurn>,
}

/// A response the server stored, and what it covers.
#[derive(Debug)]
struct StoredTurn {
    response_id: String,
    /// The messages of the request that produced it.
    sent: Vec<ChatMessage>,
    /// Ids of the tool calls it made, to recognise its assistant message.
    reply_call_ids: Vec<String>,
}

/// What the next request sends.
#[derive(Debug, PartialEq)]
pub(crate) struct InputPlan {
    /// Continue from this stored response.
    pub previous_response_id: Option<String>,
    /// Send `messages[first_new..]` as input.
    pub first_new: usize,
}

impl OpenAiResponses {
    /// A client for `spec`, sending through `http`.
    pub(crate) fn new(
        spec: ProviderSpec,
        http: HttpClient,
        retry: RetryPolicy,
        continuation: ResponsesContinuation,
    ) -> Result<Self, ProviderError> {
        let url = endpoint(&spec.base_url, "responses")?;
        Ok(Self {
            spec,
            http,
            retries: Retries::new(retry),
            url,
            continuation,
            stored: None,
        })
    }

    fn headers(&self) -> Result<HeaderMap, ProviderError> {
        let mut headers = HeaderMap::new();
        if let Some(value) = self.http.secret_header("Bearer ")? {
            headers.insert(AUTHORIZATION, value);
        }
        Ok(headers)
    }

    /// Continue from the stored response when `request` extends exactly
    /// what it covered, else replay everything.
    fn plan(&self, request: &ChatRequest) -> InputPlan {
        let replay = InputPlan {
            previous_response_id: None,
            first_new: 0,
        };
        if self.continuation != ResponsesContinuation::PreviousResponseId {
            return replay;
        }
        let Some(stored) = &self.stored else {
            return replay;
        };
        let covered = stored.sent.len();
        let extends = request.messages.len() > covered + 1
            && request.messages[..covered] == stored.sent[..]
            && matches!(
                &request.messages[covered],
                ChatMessage::Assistant { tool_calls, .. }
                    if tool_calls.iter().map(|c| &c.id).eq(stored.reply_call_ids.iter())
            );
        if !extends {
            return replay;
        }
        InputPlan {
            previous_response_id: Some(stored.response_id.clone()),
            first_new: covered + 1,
        }
    }
}

impl Provider for OpenAiResponses {
    fn turn<'a>(
        &'a mut self,
        request: &'a ChatRequest,
        on_delta: &'a mut (dyn FnMut(StreamDelta) + Send),
    ) -> TurnFuture<'a> {
        Box::pin(async move {
            let headers = self.headers()?;
            loop {
                let plan = self.plan(request);
                let store = self.continuation == ResponsesContinuation::PreviousResponseId
                    && !request.tools.is_empty();
                let body = request_body(&self.spec, request, &plan, store);
                let result = stream_turn(
                    &self.http,
                    &mut self.retries,
                    &self.url,
                    &headers,
                    &body,
                    ResponsesDecoder::default,
                    &mut *on_delta,
                )
                .await;
                match result {
                    Ok((response, response_id)) => {
                        self.stored = match response_id {
                            Some(response_id) if store => Some(StoredTurn {
                                response_id,
                                sent: request.messages.clone(),
                                reply_call_ids: response
                                    .tool_calls
                                    .iter()
                                    .map(|c| c.id.clone())
                                    .collect(),
                            }),
                            _ => None,
                        };
                        return Ok(response);
                    }
                    Err(ProviderError::Status {
                        status: 400,
                        message,
                        ..
                    }) if plan.previous_response_id.is_some() && rejects_continuation(&message) => {
                        // Stateless server or a forgotten response: replay
                        // this turn, and every later one.
                        self.continuation = ResponsesContinuation::ReplayHistory;
                        self.stored = None;
                    }
                    Err(error) => return Err(error),
                }
            }
        })
    }

    fn take_retries(&mut self) -> Vec<RetryNotice> {
        self.retries.take()
    }
}

/// True when a 400's message is about the continuation itself
/// ("previous_response_id is not supported", "Previous response with id
/// ... not found").
fn rejects_continuation(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    message.contains("previous_response_id") || message.contains("previous response")
}

/// The JSON body of one Responses request.
pub(crate) fn request_body(
    spec: &ProviderSpec,
    request: &ChatRequest,
    plan: &InputPlan,
    store: bool,
) -> Value {
    let input: Vec<Value> = request
        .messages
        .iter()
        .skip(plan.first_new)
        .flat_map(input_items)
        .collect();
    let mut body = json!({
        "model": spec.model,
        "input": input,
        "stream": true,
        "store": store,
    });
    if !request.system_prompt.is_empty() {
        body["instructions"] = json!(request.system_prompt);
    }
    if let Some(id) = &plan.previous_response_id {
        body["previous_response_id"] = json!(id);
    }
    if let Some(temperature) = spec.temperature {
        body["temperature"] = temperature_json(temperature);
    }
    if let Some(max_tokens) = spec.max_tokens {
        body["max_output_tokens"] = json!(max_tokens);
    }
    // Omitted when off: models without reasoning reject the field.
    if spec.reasoning {
        body["reasoning"] = json!({"effort": "high", "summary": "detailed"});
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                })
            })
            .collect();
        body["tool_choice"] = json!("auto");
    }
    if let Some(schema) = &request.native_schema {
        body["text"] = json!({"format": {
            "type": "json_schema",
            "name": schema.name,
            "schema": schema.schema,
            "strict": true,
        }});
    }
    body
}

/// One conversation message as Responses input items.
fn input_items(message: &ChatMessage) -> Vec<Value> {
    match message {
        ChatMessage::User { text } => vec![json!({
            "role": "user",
            "content": [{"type": "input_text", "text": text}],
        })],
        ChatMessage::Assistant { text, tool_calls } => {
            let mut items = Vec::with_capacity(tool_calls.len() + 1);
            if !text.is_empty() {
                // `type` is optional for OpenAI but llama-server cannot
                // tell an assistant message from other items without it.
                items.push(json!({
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text}],
                }));
            }
            items.extend(tool_calls.iter().map(|call| {
                json!({
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": call.arguments_json,
                })
            }));
            items
        }
        ChatMessage::ToolResult {
            call_id, output, ..
        } => vec![json!({
            "type": "function_call_output",
            "call_id": call_id,
            "output": output,
        })],
    }
}

#[derive(Debug, Default)]
struct PartialCall {
    item_id: String,
    call_id: String,
    name: String,
    arguments: String,
}

/// Assembles one streamed Responses answer; yields the turn and the
/// response id.
#[derive(Debug, Default)]
pub(crate) struct ResponsesDecoder {
    response_id: Option<String>,
    model: Option<String>,
    text: String,
    /// Function calls by output index.
    calls: BTreeMap<u64, PartialCall>,
    usage: Usage,
    stop_reason: Option<String>,
}

impl TurnDecoder for ResponsesDecoder {
    type Output = (TurnResponse, Option<String>);

    fn on_event(
        &mut self,
        event: &SseEvent,
        on_delta: &mut dyn FnMut(StreamDelta),
    ) -> Result<Progress, ProviderError> {
        let data: Value = decode_event(event, "a Responses API")?;
        let kind = text_of(&data, "type").unwrap_or(&event.event);
        match kind {
            "response.created" | "response.in_progress" => {
                if let Some(response) = data.get("response") {
                    self.note_response(response);
                }
            }
            "response.output_text.delta" => {
                if let Some(delta) = text_of(&data, "delta").filter(|d| !d.is_empty()) {
                    self.text.push_str(delta);
                    on_delta(StreamDelta::Text(delta.to_owned()));
                }
            }
            // llama-server and open-weight models stream raw reasoning
            // text rather than a summary.
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(delta) = text_of(&data, "delta").filter(|d| !d.is_empty()) {
                    on_delta(StreamDelta::Reasoning(delta.to_owned()));
                }
            }
            "response.output_item.added" | "response.output_item.done" => {
                self.note_item(&data);
            }
            "response.function_call_arguments.delta" => {
                if let (Some(call), Some(delta)) = (self.call_of(&data), text_of(&data, "delta")) {
                    call.arguments.push_str(delta);
                }
            }
            "response.function_call_arguments.done" => {
                if let (Some(call), Some(arguments)) =
                    (self.call_of(&data), text_of(&data, "arguments"))
                {
                    call.arguments = arguments.to_owned();
                }
            }
            "response.completed" | "response.incomplete" => {
                let response = data.get("response").unwrap_or(&Value::Null);
                self.note_response(response);
                self.note_usage(response.get("usage"));
                let reason = response
                    .pointer("/incomplete_details/reason")
                    .and_then(Value::as_str)
                    .or_else(|| text_of(response, "status"))
                    .unwrap_or(if kind == "response.completed" {
                        "completed"
                    } else {
                        "incomplete"
                    });
                self.stop_reason = Some(reason.to_owned());
                return Ok(Progress::Done);
            }
            "response.failed" => {
                let error = data.pointer("/response/error").unwrap_or(&Value::Null);
                return Err(ProviderError::InStream {
                    kind: text_of(error, "code")
                        .or_else(|| text_of(error, "type"))
                        .map(str::to_owned),
                    message: text_of(error, "message")
                        .unwrap_or("the response failed without a message")
                        .to_owned(),
                });
            }
            "error" => {
                let nested = data.get("error").unwrap_or(&Value::Null);
                return Err(ProviderError::InStream {
                    kind: text_of(&data, "code")
                        .or_else(|| text_of(nested, "type"))
                        .or_else(|| text_of(nested, "code"))
                        .map(str::to_owned),
                    message: text_of(&data, "message")
                        .or_else(|| text_of(nested, "message"))
                        .unwrap_or("error event without a message")
                        .to_owned(),
                });
            }
            _ => {}
        }
        Ok(Progress::More)
    }

    fn finish(self) -> Result<Self::Output, ProviderError> {
        let Some(stop_reason) = self.stop_reason else {
            return Err(ProviderError::Stream(
                "the stream ended before response.completed".into(),
            ));
        };
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (index, call) in self.calls {
            if call.name.is_empty() {
                return Err(ProviderError::Stream(format!(
                    "function call at output index {index} has no name"
                )));
            }
            let id = [call.call_id, call.item_id]
                .into_iter()
                .find(|id| !id.is_empty())
                .unwrap_or_else(|| format!("call_{index}"));
            tool_calls.push(ToolCallRequest {
                id,
                name: call.name,
                arguments_json: if call.arguments.is_empty() {
                    "{}".into()
                } else {
                    call.arguments
                },
            });
        }
        let response = TurnResponse {
            text: self.text,
            tool_calls,
            stop_reason,
            usage: self.usage,
            model: self.model,
            id: response_id(self.response_id.as_deref()),
        };
        Ok((response, self.response_id))
    }
}

impl ResponsesDecoder {
    fn note_response(&mut self, response: &Value) {
        if let Some(id) = text_of(response, "id") {
            self.response_id = Some(id.to_owned());
        }
        if let Some(model) = text_of(response, "model") {
            self.model = Some(model.to_owned());
        }
    }

    fn note_usage(&mut self, usage: Option<&Value>) {
        let Some(usage) = usage else { return };
        let count = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
        let cached = count("/input_tokens_details/cached_tokens");
        self.usage.input = count("/input_tokens").saturating_sub(cached);
        self.usage.cache_read = cached;
        self.usage.output = count("/output_tokens");
    }

    /// Records a function-call output item (added or done; `done` carries
    /// the complete arguments).
    fn note_item(&mut self, data: &Value) {
        let Some(item) = data.get("item") else { return };
        if text_of(item, "type") != Some("function_call") {
            return;
        }
        let index = data
            .get("output_index")
            .and_then(Value::as_u64)
            .unwrap_or(self.calls.len() as u64);
        let call = self.calls.entry(index).or_default();
        let fields = [
            (&mut call.item_id, "id"),
            (&mut call.call_id, "call_id"),
            (&mut call.name, "name"),
        ];
        for (field, key) in fields {
            if let Some(value) = text_of(item, key).filter(|v| !v.is_empty()) {
                *field = value.to_owned();
            }
        }
        if let Some(arguments) = text_of(item, "arguments").filter(|a| !a.is_empty()) {
            call.arguments = arguments.to_owned();
        }
    }

    /// The call an arguments event belongs to, by output index or item id.
    fn call_of(&mut self, data: &Value) -> Option<&mut PartialCall> {
        if let Some(index) = data.get("output_index").and_then(Value::as_u64)
            && self.calls.contains_key(&index)
        {
            return self.calls.get_mut(&index);
        }
        let item_id = text_of(data, "item_id")?;
        self.calls.values_mut().find(|c| c.item_id == item_id)
    }
}

#[cfg(test)]
#[path = "openai_responses_tests.rs"]
mod tests;
