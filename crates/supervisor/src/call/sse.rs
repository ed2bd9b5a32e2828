//! The SSE framing of `subagent call --sse`, as the call_subagent tool
//! parses it: `event: <kind>` then `data: {"id":..,"delta":..,"type":<kind>}`
//! then a blank line, one frame per event.
//!
//! [`SseRelay`] turns one run's progress and content into frames: only the
//! root child's (a nested subagent's text is its parent's tool result, not
//! the answer), a `block_end` after each model turn, and the closing frames.
//! It must stay cheap: the supervisor calls it inline (see
//! [`crate::run::ProgressSink`]).

use serde::Serialize;

use crate::run::{ContentEvent, ProgressEvent};

/// What the plain (non-SSE) output ends with, after a blank line.
pub const DONE_MARKER: &str = "=== [ DONE ] ===";

/// The event kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseKind {
    /// A piece of the answer text (the only kind the seed's tool keeps).
    OutputText,
    /// A piece of reasoning text.
    ReasoningContent,
    /// A tool call: `id` the call id, `delta` `{"name":..,"arguments":..}`.
    ToolCall,
    /// A tool result: `id` the call id, `delta` its output.
    ToolResult,
    /// The structured answer, once, as JSON text.
    OutputStructured,
    /// A model turn ended.
    BlockEnd,
    /// The run ended; always the last frame.
    ResponseEnd,
}

impl SseKind {
    /// The event name.
    pub fn as_str(self) -> &'static str {
        match self {
            SseKind::OutputText => "output_text",
            SseKind::ReasoningContent => "reasoning_content",
            SseKind::ToolCall => "tool_call",
            SseKind::ToolResult => "tool_result",
            SseKind::OutputStructured => "output_structured",
            SseKind::BlockEnd => "block_end",
            SseKind::ResponseEnd => "response_end",
        }
    }
}

#[derive(Serialize)]
struct Data<'a> {
    id: &'a str,
    delta: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// The `delta` of a `tool_call` frame.
#[derive(Serialize)]
struct Call<'a> {
    name: &'a str,
    arguments: &'a str,
}

/// One frame without its closing blank line (the writer ends each frame
/// with one newline more): `event: <kind>\ndata: <json>\n`.
pub fn frame(kind: SseKind, id: &str, delta: &str) -> String {
    let data = Data {
        id,
        delta,
        kind: kind.as_str(),
    };
    // Serializing three strings cannot fail; the fallback keeps the frame valid.
    let json = serde_json::to_string(&data).unwrap_or_else(|_| "{}".to_owned());
    format!("event: {}\ndata: {json}\n", kind.as_str())
}

/// Turns one call's events into frames (see the module doc).
#[derive(Debug, Default)]
pub struct SseRelay {
    root: Option<String>,
    turns: u32,
}

impl SseRelay {
    /// The frames a progress event gives: `block_end` when the root starts
    /// a turn after its first.
    pub fn on_progress(&mut self, event: &ProgressEvent) -> Vec<String> {
        match event {
            ProgressEvent::Started { run_id, .. } if self.root.is_none() => {
                self.root = Some(run_id.clone());
                Vec::new()
            }
            ProgressEvent::Turn { run_id, .. } if self.is_root(run_id) => {
                self.turns += 1;
                if self.turns > 1 {
                    vec![frame(SseKind::BlockEnd, "", "")]
                } else {
                    Vec::new()
                }
            }
            _ => Vec::new(),
        }
    }

    /// The frame a content event gives, if it is the root's.
    pub fn on_content(&mut self, event: &ContentEvent) -> Option<String> {
        if !self.is_root(event.run_id()) {
            return None;
        }
        Some(match event {
            ContentEvent::TextDelta { text, .. } => frame(SseKind::OutputText, "", text),
            ContentEvent::ReasoningDelta { text, .. } => frame(SseKind::ReasoningContent, "", text),
            ContentEvent::ToolCall {
                call_id,
                name,
                arguments_json,
                ..
            } => {
                let call = Call {
                    name,
                    arguments: arguments_json,
                };
                // Two strings always serialize.
                let delta = serde_json::to_string(&call).unwrap_or_default();
                frame(SseKind::ToolCall, call_id, &delta)
            }
            ContentEvent::ToolResult {
                call_id, output, ..
            } => frame(SseKind::ToolResult, call_id, output),
        })
    }

    /// The closing frames: the last turn's `block_end`, the structured
    /// answer if any, an error as `output_text` (`Error: <message>`, which
    /// is what the seed's tool returns to its model), then `response_end`.
    ///
    /// A failed run's last turn gets no `block_end`: in the seed's
    /// contract `block_end` is a completed response, and the turn a failure
    /// cut (or the run that ended after it for a limit) did not complete
    /// the answer; the stream ends `output_text` (the error), `response_end`.
    pub fn finish(&mut self, structured: Option<&str>, error: Option<&str>) -> Vec<String> {
        let mut frames = Vec::new();
        if self.turns > 0 && error.is_none() {
            frames.push(frame(SseKind::BlockEnd, "", ""));
        }
        if let Some(json) = structured {
            frames.push(frame(SseKind::OutputStructured, "", json));
        }
        if let Some(message) = error {
            frames.push(frame(SseKind::OutputText, "", &format!("Error: {message}")));
        }
        frames.push(frame(SseKind::ResponseEnd, "", ""));
        frames
    }

    fn is_root(&self, run_id: &str) -> bool {
        self.root.as_deref() == Some(run_id)
    }
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
