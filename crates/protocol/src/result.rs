//! The result object returned to a parent: `{content, details}`, exactly as
//! `shared/schemas/result.schema.json` describes. JSON types: optional fields
//! are omitted when absent, names are camelCase. Never put these on the wire.

use serde::{Deserialize, Serialize};

use crate::changes::Changes;
use crate::error_code::ErrorCode;
pub use crate::limit_reached::{LimitName, LimitReached};
pub use crate::mode::{Mode, RunMode};
use crate::session::SandboxStatus;
use crate::usage::Usage;

/// What a parent gets back from one subagent call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubagentResult {
    /// Text for the parent model; `content[0].text` is sanitized and truncated.
    pub content: Vec<ContentItem>,
    /// Machine-readable details.
    pub details: Details,
}

/// One content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ContentItem {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
}

/// `details` of the result object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Details {
    /// single, parallel, chain or management.
    pub mode: Mode,
    /// Id of the run (32 hex digits, a UUIDv7; 8 in results of older versions).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub run_id: Option<String>,
    /// One entry per child that ran.
    pub results: Vec<SingleResult>,
    /// Set when the call as a whole failed or output was truncated.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<ErrorInfo>,
}

/// `details.error`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorInfo {
    /// The failure class.
    pub code: ErrorCode,
    /// What happened and what to do next.
    pub message: String,
}

/// One child's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SingleResult {
    /// Agent name.
    pub agent: String,
    /// Task text as given.
    pub task: String,
    /// 0 on success; non-zero on failure (the worker's exit status, or 1).
    pub exit_code: i32,
    /// Tokens, cost and turns.
    pub usage: Usage,
    /// Readable error, when it failed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// Path of the child's session file.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub session_file: Option<String>,
    /// Sanitized output, cut to the return limit like `content` (the full
    /// text is in `truncated.fullOutputPath`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub output: Option<String>,
    /// The object `report_back` or native mode produced.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub structured_output: Option<serde_json::Value>,
    /// Text and tool calls for rich rendering.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub display_items: Option<Vec<DisplayItem>>,
    /// Model that answered.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub model: Option<String>,
    /// Wall time of the child, ms.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub duration_ms: Option<u64>,
    /// Why it stopped (`completed`, `max_tokens` for an answer the model's
    /// output cap cut, `report_back`, `max_turns`, `timeout`, ...).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stop_reason: Option<String>,
    /// The limit that ended the run, when one did (a failed run only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub limit: Option<LimitReached>,
    /// Set when returned text was cut.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub truncated: Option<Truncation>,
    /// How the worker process ended, and what it used.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub termination: Option<TerminationInfo>,
    /// Which protections the child had; `notApplied` says what was missing.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sandbox: Option<SandboxStatus>,
    /// Complete model turns of a recorded run this one continued from
    /// (`run --resume`, MCP and serve `resume`, batch re-runs); absent for a
    /// fresh run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub continued_from: Option<u32>,
    /// What the run changed in its workspace and what was applied (a run
    /// with a copy-on-write layer, `--isolation overlay`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub changes: Option<Changes>,
    /// The model's task list as its last accepted `todo_write` call left
    /// it: present (`[]` until one is written) when `todo_write` was among
    /// the run's tools, absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub todos: Option<Vec<TodoItem>>,
}

/// One item of a run's task list (Claude Code's `TodoWrite` item).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TodoItem {
    /// What is to be done, imperative ("Run the tests").
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
    /// The same, as it is being done ("Running the tests"); absent when
    /// the model left it out (Claude Code's older form).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub active_form: Option<String>,
}

/// Where a task-list item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on (one at a time).
    InProgress,
    /// Done.
    Completed,
}

/// How a worker process ended (extra field beyond the contract: operators
/// read it; parents should match on `details.error.code` instead).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminationInfo {
    /// `exited`, `signaled`, `timeout`, `idle_timeout`, `output_limit`,
    /// `memory_limit`, `pids_limit`, `cancelled`, `killed` (by the supervisor
    /// for a protocol violation) or `leaked`.
    pub reason: String,
    /// Exit status of the worker, when it exited.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub exit_status: Option<i32>,
    /// Signal that ended the worker, when one did.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub signal: Option<i32>,
    /// Descendants found alive after the worker exited, and killed.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub leaked_pids: Vec<u32>,
    /// Wall time, ms.
    pub wall_ms: u64,
    /// CPU time (user + system), ms.
    pub cpu_ms: u64,
    /// Peak resident set size, bytes.
    pub peak_rss_bytes: u64,
}

impl SingleResult {
    /// A result with only the required fields set.
    pub fn new(agent: impl Into<String>, task: impl Into<String>, exit_code: i32) -> Self {
        Self {
            agent: agent.into(),
            task: task.into(),
            exit_code,
            usage: Usage::default(),
            error: None,
            session_file: None,
            output: None,
            structured_output: None,
            display_items: None,
            model: None,
            duration_ms: None,
            stop_reason: None,
            limit: None,
            truncated: None,
            termination: None,
            sandbox: None,
            continued_from: None,
            changes: None,
            todos: None,
        }
    }
}

/// A text or tool-call item for rendering.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum DisplayItem {
    /// Assistant text.
    Text {
        /// The text.
        text: String,
    },
    /// A tool call.
    ToolCall {
        /// Tool name.
        name: String,
        /// Arguments (an object; invalid JSON from the model becomes `{"_raw": ...}`).
        args: serde_json::Value,
    },
}

/// How returned text was cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Truncation {
    /// Bytes of the full text.
    pub original_bytes: u64,
    /// Lines of the full text.
    pub original_lines: u64,
    /// Bytes cut away.
    pub bytes_cut: u64,
    /// Where the full text is kept, when it was persisted.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub full_output_path: Option<String>,
}

impl SubagentResult {
    /// A management-mode failure with no child run, e.g. UNKNOWN_AGENT.
    pub fn refusal(code: ErrorCode, message: impl Into<String>) -> Self {
        let mut message = message.into();
        if message.trim().is_empty() {
            // The schema requires a non-empty message; never emit an invalid result.
            message = format!("subagent call refused ({code})");
        }
        Self {
            content: vec![ContentItem::Text {
                text: message.clone(),
            }],
            details: Details {
                mode: Mode::Management,
                run_id: None,
                results: Vec::new(),
                error: Some(ErrorInfo { code, message }),
            },
        }
    }
}
