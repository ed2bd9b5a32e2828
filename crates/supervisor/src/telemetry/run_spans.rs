//! The spans of one run, built from the worker events the supervisor
//! receives: `invoke_agent {agent}` from start to end, `chat {model}` from
//! a turn's start to its usage, `execute_tool {tool}` from a tool call to
//! its result (GenAI semantic conventions). A batch's span
//! ([`BatchSpan`]) is its tasks' runs' parent.
//!
//! Text (the task, the answer, tool arguments and results) is attached
//! only when the operator opted in, and then masked as the session file
//! masks it. Every call returns at once: ending a span only queues it.
//! This module decides nothing about the run and writes no file.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Array, Context, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::{SdkTracer, Span};
use subagent_protocol::result::SubagentResult;
use subagent_protocol::{ProviderKind, WorkerEvent};

use super::carrier::TraceParent;

/// Most bytes of one text attribute (content opted in).
const MAX_TEXT_BYTES: usize = 16 * 1024;

/// What a run's root span says from the start.
#[derive(Debug, Clone, Copy)]
pub struct RunStart<'a> {
    /// The run id.
    pub run_id: &'a str,
    /// The agent.
    pub agent: &'a str,
    /// The model asked.
    pub model: &'a str,
    /// The provider's kind.
    pub provider: ProviderKind,
    /// The task, masked (exported only with content opted in).
    pub task: &'a str,
}

/// The spans of one run (a no-op when telemetry is off).
#[derive(Debug, Default)]
pub struct RunSpans(Option<Mutex<Live>>);

#[derive(Debug)]
struct Live {
    tracer: SdkTracer,
    /// The context holding the `invoke_agent` span.
    root: Context,
    model: String,
    provider: &'static str,
    include_content: bool,
    chat: Option<Span>,
    tools: HashMap<String, (Span, Instant)>,
    dropped: Arc<AtomicU64>,
    dropped_at_start: u64,
}

/// The `gen_ai.provider.name` of a provider kind.
fn provider_name(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::OpenaiChat | ProviderKind::OpenaiResponses => "openai",
        ProviderKind::Anthropic => "anthropic",
        ProviderKind::VertexaiAnthropic => "gcp.vertex_ai",
    }
}

fn text(value: &str) -> Value {
    Value::String(
        subagent_protocol::text::prefix_bytes(value, MAX_TEXT_BYTES)
            .to_owned()
            .into(),
    )
}

impl RunSpans {
    /// Spans that record nothing.
    pub fn off() -> Self {
        Self(None)
    }

    pub(super) fn start(
        tracer: SdkTracer,
        start: RunStart<'_>,
        parent: Option<&TraceParent>,
        include_content: bool,
        dropped: Arc<AtomicU64>,
    ) -> Self {
        let parent_cx = parent.map_or_else(Context::new, |p| {
            Context::new().with_remote_span_context(p.0.clone())
        });
        let provider = provider_name(start.provider);
        let mut attributes = vec![
            KeyValue::new("gen_ai.operation.name", "invoke_agent"),
            KeyValue::new("gen_ai.agent.name", start.agent.to_owned()),
            KeyValue::new("gen_ai.request.model", start.model.to_owned()),
            KeyValue::new("gen_ai.provider.name", provider),
            KeyValue::new("subagent.run_id", start.run_id.to_owned()),
        ];
        if include_content {
            attributes.push(KeyValue::new("subagent.task", text(start.task)));
        }
        let span = tracer
            .span_builder(format!("invoke_agent {}", start.agent))
            .with_kind(SpanKind::Internal)
            .with_attributes(attributes)
            .start_with_context(&tracer, &parent_cx);
        let dropped_at_start = dropped.load(Ordering::Relaxed);
        Self(Some(Mutex::new(Live {
            tracer,
            root: parent_cx.with_span(span),
            model: start.model.to_owned(),
            provider,
            include_content,
            chat: None,
            tools: HashMap::new(),
            dropped,
            dropped_at_start,
        })))
    }

    fn with(&self, f: impl FnOnce(&mut Live)) {
        if let Some(live) = &self.0
            && let Ok(mut live) = live.lock()
        {
            f(&mut live);
        }
    }

    /// Takes in one worker event; `mask` masks secrets of text.
    pub fn on_event(&self, event: &WorkerEvent, mask: &dyn Fn(&str) -> String) {
        self.with(|live| live.on_event(event, mask));
    }

    /// The parent of a nested run started by tool call `call_id`: that
    /// call's `execute_tool` span (the run's own span when it has none).
    pub fn parent_of_call(&self, call_id: &str) -> Option<TraceParent> {
        let live = self.0.as_ref()?.lock().ok()?;
        // The worker makes the model's call id unique as `ID#N` before it
        // asks for the spawn (worker/src/subagent_calls.rs).
        let model_call_id = call_id.rsplit_once('#').map_or(call_id, |(id, _)| id);
        let context = match live
            .tools
            .get(call_id)
            .or_else(|| live.tools.get(model_call_id))
        {
            Some((span, _)) => span.span_context().clone(),
            None => live.root.span().span_context().clone(),
        };
        Some(TraceParent(context))
    }

    /// Spans dropped by the export queue since this run started.
    pub fn dropped_during_run(&self) -> u64 {
        let Some(Ok(live)) = self.0.as_ref().map(|l| l.lock()) else {
            return 0;
        };
        live.dropped
            .load(Ordering::Relaxed)
            .saturating_sub(live.dropped_at_start)
    }

    /// Ends every span of the run with what `result` says.
    pub fn end(&self, result: &SubagentResult) {
        self.with(|live| live.end(result));
    }
}

impl Live {
    fn on_event(&mut self, event: &WorkerEvent, mask: &dyn Fn(&str) -> String) {
        match event {
            WorkerEvent::TurnStart { turn } => {
                if let Some(mut old) = self.chat.take() {
                    old.end();
                }
                let span = self
                    .tracer
                    .span_builder(format!("chat {}", self.model))
                    .with_kind(SpanKind::Client)
                    .with_attributes([
                        KeyValue::new("gen_ai.operation.name", "chat"),
                        KeyValue::new("gen_ai.request.model", self.model.clone()),
                        KeyValue::new("gen_ai.provider.name", self.provider),
                        KeyValue::new("subagent.turn", i64::from(*turn)),
                    ])
                    .start_with_context(&self.tracer, &self.root);
                self.chat = Some(span);
            }
            WorkerEvent::AssistantMessageEnd {
                stop_reason,
                text: answer,
                response_id,
                ..
            } => {
                if let Some(chat) = &mut self.chat {
                    chat.set_attribute(KeyValue::new(
                        "gen_ai.response.finish_reasons",
                        Value::Array(Array::String(vec![StringValue::from(stop_reason.clone())])),
                    ));
                    // Held to the protocol's rule and masked: it came
                    // through the worker from a remote server.
                    if let Some(id) = subagent_protocol::text::response_id(response_id.as_deref()) {
                        chat.set_attribute(KeyValue::new("gen_ai.response.id", mask(&id)));
                    }
                    if self.include_content {
                        chat.set_attribute(KeyValue::new("subagent.output", text(&mask(answer))));
                    }
                }
            }
            WorkerEvent::Usage { usage, .. } => {
                if let Some(mut chat) = self.chat.take() {
                    let input = usage
                        .input
                        .saturating_add(usage.cache_read)
                        .saturating_add(usage.cache_write);
                    chat.set_attribute(KeyValue::new("gen_ai.usage.input_tokens", clamp(input)));
                    chat.set_attribute(KeyValue::new(
                        "gen_ai.usage.output_tokens",
                        clamp(usage.output),
                    ));
                    chat.end();
                }
            }
            WorkerEvent::ToolCall {
                call_id,
                name,
                arguments_json,
                ..
            } => {
                let mut attributes = vec![
                    KeyValue::new("gen_ai.operation.name", "execute_tool"),
                    KeyValue::new("gen_ai.tool.name", name.clone()),
                    KeyValue::new("gen_ai.tool.call.id", call_id.clone()),
                ];
                if self.include_content {
                    attributes.push(KeyValue::new(
                        "gen_ai.tool.call.arguments",
                        text(&mask(arguments_json)),
                    ));
                }
                let span = self
                    .tracer
                    .span_builder(format!("execute_tool {name}"))
                    .with_kind(SpanKind::Internal)
                    .with_attributes(attributes)
                    .start_with_context(&self.tracer, &self.root);
                self.tools.insert(call_id.clone(), (span, Instant::now()));
            }
            WorkerEvent::ToolResult {
                call_id,
                output,
                is_error,
                ..
            } => {
                if let Some((mut span, started)) = self.tools.remove(call_id) {
                    end_tool(&mut span, started, *is_error);
                    if self.include_content {
                        span.set_attribute(KeyValue::new(
                            "gen_ai.tool.call.result",
                            text(&mask(output)),
                        ));
                    }
                    span.end();
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, result: &SubagentResult) {
        if let Some(mut chat) = self.chat.take() {
            chat.end();
        }
        for (_, (mut span, started)) in self.tools.drain() {
            end_tool(&mut span, started, true);
            span.set_attribute(KeyValue::new("subagent.tool.outcome", "unfinished"));
            span.end();
        }
        let root = self.root.span();
        let single = result.details.results.first();
        if let Some(single) = single {
            root.set_attribute(KeyValue::new(
                "gen_ai.usage.input_tokens",
                clamp(single.usage.input),
            ));
            root.set_attribute(KeyValue::new(
                "gen_ai.usage.output_tokens",
                clamp(single.usage.output),
            ));
            if let Some(reason) = &single.stop_reason {
                root.set_attribute(KeyValue::new("subagent.stop_reason", reason.clone()));
            }
            if let Some(limit) = &single.limit
                && let Ok(serde_json::Value::String(name)) = serde_json::to_value(&limit.name)
            {
                root.set_attribute(KeyValue::new("subagent.limit", name));
            }
        }
        match &result.details.error {
            None => {
                root.set_attribute(KeyValue::new("subagent.status", "ok"));
                root.set_status(Status::Ok);
            }
            Some(error) => {
                let code = error.code.to_string();
                root.set_attribute(KeyValue::new("subagent.status", code.clone()));
                root.set_attribute(KeyValue::new("error.type", code));
                root.set_status(Status::error(error.message.clone()));
            }
        }
        root.end();
    }
}

fn end_tool(span: &mut Span, started: Instant, is_error: bool) {
    let ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
    span.set_attribute(KeyValue::new("subagent.tool.duration_ms", ms));
    span.set_attribute(KeyValue::new(
        "subagent.tool.outcome",
        if is_error { "error" } else { "ok" },
    ));
    if is_error {
        span.set_attribute(KeyValue::new("error.type", "tool_error"));
        span.set_status(Status::error("the tool failed or was refused"));
    }
}

fn clamp(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A batch's span: the parent of its tasks' runs (a no-op when off).
#[derive(Debug, Default)]
pub struct BatchSpan(Option<Span>);

impl BatchSpan {
    /// A span that records nothing.
    pub fn off() -> Self {
        Self(None)
    }

    pub(super) fn start(tracer: &SdkTracer, tasks: usize, parent: Option<&TraceParent>) -> Self {
        let parent_cx = parent.map_or_else(Context::new, |p| {
            Context::new().with_remote_span_context(p.0.clone())
        });
        let span = tracer
            .span_builder("batch")
            .with_kind(SpanKind::Internal)
            .with_attributes([KeyValue::new(
                "subagent.batch.tasks",
                i64::try_from(tasks).unwrap_or(i64::MAX),
            )])
            .start_with_context(tracer, &parent_cx);
        Self(Some(span))
    }

    /// The parent its tasks' runs are given.
    pub fn parent(&self) -> Option<TraceParent> {
        self.0
            .as_ref()
            .map(|s| TraceParent(s.span_context().clone()))
    }

    /// Ends it, with how many tasks failed.
    pub fn end(mut self, failed: usize) {
        if let Some(span) = &mut self.0 {
            span.set_attribute(KeyValue::new(
                "subagent.batch.failed",
                i64::try_from(failed).unwrap_or(i64::MAX),
            ));
            span.end();
        }
    }
}
