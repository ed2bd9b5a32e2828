//! What the supervisor remembers of a running child's events: the session
//! lines they become, the display items and partial text for the result, and
//! the last event for diagnostics.
//!
//! Progress ticks (turn starts, text deltas) are never written to the session
//! file; whole messages, tool calls, tool results, usage and logs are. Every
//! text is masked for secrets before it is stored. Memory is bounded: partial
//! text and display items are capped, so a flooding worker cannot grow it.

use subagent_protocol::message::LogLevel;
use subagent_protocol::result::DisplayItem;
use subagent_protocol::session::{
    LogLine, LogSource, MessageLine, Role, SessionEntry, SessionLine, ToolCallLine, ToolResultLine,
    UsageLine,
};
use subagent_protocol::text::response_id;
use subagent_protocol::{Usage, WorkerEvent};

use crate::run::record::todos::RunTodos;
use crate::sanitize::Sanitizer;

/// Display items kept per run; later ones are dropped (the session file has all).
const MAX_DISPLAY_ITEMS: usize = 500;

/// Bytes of in-progress assistant text kept for diagnostics (1 MiB): enough to
/// show what the model was saying when the worker died, bounded for floods.
const MAX_PARTIAL_TEXT: usize = 1024 * 1024;

/// The supervisor's running view of one child.
#[derive(Debug, Default)]
pub(in crate::run) struct EventRecord {
    pub display_items: Vec<DisplayItem>,
    /// Text of the turn in progress (deltas since the last message end).
    pub partial_text: String,
    /// Text of the last complete assistant message.
    pub last_assistant_text: String,
    /// The provider's stop reason of the last complete assistant message
    /// (`stop`, `length`, `max_tokens`, ...).
    pub last_stop_reason: Option<String>,
    /// Usage summed from per-turn events (used when no Done arrives).
    pub usage: Usage,
    /// Name of the last event seen, for diagnostics.
    pub last_event: Option<&'static str>,
    /// Last error-level log from the worker.
    pub last_error_log: Option<String>,
    /// The model's task list (`todo_write`).
    pub todos: RunTodos,
    /// The last event changed the task list: the watch reports it.
    pub todos_changed: bool,
}

impl EventRecord {
    /// The record of a run offered `tools`, continuing `history` (empty
    /// for a fresh run).
    pub fn new(tools: &[String], history: &[subagent_protocol::HistoryMessage]) -> Self {
        Self {
            todos: RunTodos::new(tools, history),
            ..Self::default()
        }
    }

    /// Takes in one event; returns the session line it becomes, if any, and
    /// whether it counts as progress for the idle timeout.
    pub fn observe(
        &mut self,
        event: WorkerEvent,
        sanitizer: &Sanitizer,
    ) -> (Option<SessionLine>, bool) {
        let line = |entry| Some(SessionLine::now(entry));
        self.todos_changed = false;
        match event {
            WorkerEvent::TurnStart { .. } => {
                self.last_event = Some("turn_start");
                self.partial_text.clear();
                (None, true)
            }
            WorkerEvent::TextDelta { text } => {
                self.last_event = Some("text_delta");
                push_capped(&mut self.partial_text, &text, MAX_PARTIAL_TEXT);
                (None, true)
            }
            WorkerEvent::ReasoningDelta { .. } => {
                self.last_event = Some("reasoning_delta");
                (None, true)
            }
            WorkerEvent::ToolCall {
                turn,
                call_id,
                name,
                arguments_json,
            } => {
                self.last_event = Some("tool_call");
                let masked = sanitizer.mask_secrets(&arguments_json);
                self.todos.on_call(&call_id, &name, &masked);
                let args = parse_args(&masked);
                self.push_display(DisplayItem::ToolCall {
                    name: name.clone(),
                    args: args.clone(),
                });
                (
                    line(SessionEntry::ToolCall(ToolCallLine {
                        turn,
                        call_id,
                        name,
                        args,
                    })),
                    true,
                )
            }
            WorkerEvent::ToolResult {
                call_id,
                name,
                output,
                is_error,
            } => {
                self.last_event = Some("tool_result");
                self.todos_changed = self.todos.on_result(&call_id, is_error).is_some();
                let output = sanitizer.mask_secrets(&output);
                (
                    line(SessionEntry::ToolResult(ToolResultLine {
                        call_id,
                        name,
                        output,
                        is_error,
                    })),
                    true,
                )
            }
            WorkerEvent::AssistantMessageEnd {
                turn,
                text,
                stop_reason,
                response_id: response_id_sent,
            } => {
                self.last_event = Some("assistant_message_end");
                let text = sanitizer.mask_secrets(&text);
                if !text.is_empty() {
                    self.push_display(DisplayItem::Text { text: text.clone() });
                }
                self.partial_text.clear();
                self.last_assistant_text.clone_from(&text);
                self.last_stop_reason = Some(stop_reason.clone());
                let entry = SessionEntry::Message(MessageLine {
                    role: Role::Assistant,
                    turn,
                    text,
                    stop_reason: Some(stop_reason),
                    // The worker checked it; what reaches the file is held
                    // to the same rule here, and masked like any text.
                    response_id: response_id(response_id_sent.as_deref())
                        .map(|id| sanitizer.mask_secrets(&id)),
                });
                (line(entry), true)
            }
            WorkerEvent::Usage { turn, usage } => {
                self.last_event = Some("usage");
                self.usage.add(&usage);
                (line(SessionEntry::Usage(UsageLine { turn, usage })), true)
            }
            WorkerEvent::UserMessage { turn, text } => {
                self.last_event = Some("user_message");
                let entry = SessionEntry::Message(MessageLine {
                    role: Role::User,
                    turn,
                    text: sanitizer.mask_secrets(&text),
                    stop_reason: None,
                    response_id: None,
                });
                (line(entry), true)
            }
            WorkerEvent::Log { level, message } => {
                let message = sanitizer.mask_secrets(&message);
                if level == LogLevel::Error {
                    self.last_error_log = Some(message.clone());
                }
                let entry = SessionEntry::Log(LogLine {
                    level,
                    source: LogSource::Worker,
                    message,
                });
                (line(entry), false)
            }
        }
    }

    fn push_display(&mut self, item: DisplayItem) {
        if self.display_items.len() < MAX_DISPLAY_ITEMS {
            self.display_items.push(item);
        }
    }
}

/// Tool arguments as an object for display; invalid JSON or a non-object is
/// wrapped as `{"_raw": ...}` so `args` is always an object.
fn parse_args(json: &str) -> serde_json::Value {
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        Ok(other) => serde_json::json!({ "_raw": other }),
        Err(_) => serde_json::json!({ "_raw": json }),
    }
}

fn push_capped(buf: &mut String, text: &str, cap: usize) {
    let room = cap.saturating_sub(buf.len());
    if room == 0 {
        return;
    }
    buf.push_str(subagent_protocol::text::prefix_bytes(text, room));
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
