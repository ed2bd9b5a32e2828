//! The recorded conversation a resumed run starts from, as it crosses fd 3
//! inside [`crate::TaskSpec::history`] (protocol 6).
//!
//! The supervisor rebuilds it from the session file it wrote; the worker
//! puts it in front of the new task and runs on. Provider-neutral: each
//! provider turns it into its own message shapes, as it does the live
//! conversation. Wire types: no skipped or flattened fields; tool arguments
//! travel as JSON text.

use serde::{Deserialize, Serialize};

/// One message of a recorded conversation, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum HistoryMessage {
    /// The task, a follow-up, or a reminder the loop sent.
    User {
        /// The text (secrets masked, as the session file holds it).
        text: String,
    },
    /// A complete model turn.
    Assistant {
        /// Its text (may be empty).
        text: String,
        /// The tool calls it made, in order.
        tool_calls: Vec<HistoryToolCall>,
    },
    /// The result of one tool call of the assistant turn before it.
    ToolResult {
        /// Id of the call answered.
        call_id: String,
        /// Tool name.
        name: String,
        /// Output the model was shown.
        output: String,
        /// True when the tool failed (or was not run).
        is_error: bool,
    },
}

/// A tool call of a recorded assistant turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryToolCall {
    /// The provider's call id, as recorded.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as JSON text.
    pub arguments_json: String,
}
