//! The conversation a run starts from: a resumed run's recorded history
//! (from [`TaskSpec::history`]), then its task when it has one.
//!
//! Pure conversion into the provider-neutral [`ChatMessage`]s every
//! provider already speaks; nothing here checks the history (the
//! supervisor, which wrote the session file it came from, did that).

use subagent_protocol::{HistoryMessage, TaskSpec};

use crate::provider::{ChatMessage, ToolCallRequest};

/// The first messages of the run: the history, oldest first, then the
/// task as a user message unless it is empty (an interrupted run continued
/// as it stood, whose history ends where the model takes over).
pub(super) fn opening_messages(spec: &TaskSpec) -> Vec<ChatMessage> {
    let mut messages: Vec<ChatMessage> = spec.history.iter().map(chat_message).collect();
    if !spec.task.is_empty() || messages.is_empty() {
        messages.push(ChatMessage::User {
            text: spec.task.clone(),
        });
    }
    messages
}

fn chat_message(message: &HistoryMessage) -> ChatMessage {
    match message {
        HistoryMessage::User { text } => ChatMessage::User { text: text.clone() },
        HistoryMessage::Assistant { text, tool_calls } => ChatMessage::Assistant {
            text: text.clone(),
            tool_calls: tool_calls
                .iter()
                .map(|call| ToolCallRequest {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments_json: call.arguments_json.clone(),
                })
                .collect(),
        },
        HistoryMessage::ToolResult {
            call_id,
            name,
            output,
            is_error,
        } => ChatMessage::ToolResult {
            call_id: call_id.clone(),
            name: name.clone(),
            output: output.clone(),
            is_error: *is_error,
        },
    }
}
