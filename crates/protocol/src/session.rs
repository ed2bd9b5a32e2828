//! The lines of a session file: one JSON object per line, each with `type`
//! and `timestamp`, as `shared/schemas/session-line.schema.json` describes.
//!
//! Format rule: [`SESSION_FORMAT_VERSION`] is bumped whenever a line type
//! gains a required field or changes meaning; new optional fields and new
//! line types do not bump it, and readers skip line types they do not know.

use serde::{Deserialize, Serialize};

use crate::limit_reached::LimitReached;
use crate::limits::Limits;
use crate::message::LogLevel;
pub use crate::mode::RunMode;
use crate::task_spec::OutputMode;
use crate::usage::Usage;

/// Version written in the `session` header line.
pub const SESSION_FORMAT_VERSION: u32 = 1;

/// One line: a timestamp and a typed entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionLine {
    /// The entry; its variant gives the line's `type`.
    #[serde(flatten)]
    pub entry: SessionEntry,
    /// When the line was written (RFC 3339 UTC, ms).
    pub timestamp: String,
}

impl SessionLine {
    /// The entry stamped with the current time.
    pub fn now(entry: SessionEntry) -> Self {
        Self {
            entry,
            timestamp: crate::time::now_rfc3339_ms(),
        }
    }

    /// True for lines that must be fsynced (header and lifecycle).
    pub fn is_lifecycle(&self) -> bool {
        matches!(
            self.entry,
            SessionEntry::Session(_) | SessionEntry::AgentEvent(_)
        )
    }
}

/// The kinds of line.
#[expect(
    clippy::large_enum_variant,
    reason = "one header per file; lines are not held in bulk unboxed"
)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionEntry {
    /// The first line of a child's file.
    Session(SessionHeader),
    /// A lifecycle record (start, complete, error, aborted).
    AgentEvent(AgentEvent),
    /// A user or assistant message.
    Message(MessageLine),
    /// A tool call by the model.
    ToolCall(ToolCallLine),
    /// A tool's result.
    ToolResult(ToolResultLine),
    /// Usage of one turn.
    Usage(UsageLine),
    /// An excerpt of the worker's stdout or stderr.
    Output(OutputLine),
    /// A limit that was hit, and what was done about it.
    Limit(LimitLine),
    /// A log line from the worker or supervisor.
    Log(LogLine),
    /// What the run changed in its workspace and what became of it (a run
    /// with a copy-on-write layer); written once the run ended, and again
    /// by `subagent apply`.
    Changes(crate::changes::Changes),
}

/// The `session` header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionHeader {
    /// [`SESSION_FORMAT_VERSION`].
    pub version: u32,
    /// The run id.
    pub run_id: String,
    /// Agent name.
    pub agent: String,
    /// Task text (secrets masked).
    pub task: String,
    /// Model id.
    pub model: String,
    /// Provider kind.
    pub provider: String,
    /// Working directory of the child.
    pub cwd: String,
    /// Depth of the child.
    pub depth: u32,
    /// Limits in force.
    pub limits: Limits,
    /// Which protections were applied and which were not.
    pub sandbox: SandboxStatus,
    /// Which layers of the tool sandbox this child's tool processes get on
    /// this machine (present when the child may run a process tool).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tool_sandbox: Option<SandboxStatus>,
    /// The parent's session file, when there is one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub parent_session: Option<String>,
    /// The tools the worker was given, so `sessions replay` can offer the
    /// same ones. Like every field below it, optional and absent from files
    /// written before it (read as `None`): new optional fields do not bump
    /// [`SESSION_FORMAT_VERSION`].
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tools: Option<Vec<String>>,
    /// The output schema the run had to satisfy, when it had one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub output_schema: Option<serde_json::Value>,
    /// How structured output was obtained (present with `outputSchema`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub output_mode: Option<OutputMode>,
    /// Model turns the child was allowed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub max_turns: Option<u32>,
    /// Dollars the child was allowed, when capped.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub max_cost: Option<f64>,
    /// The Python executable this child's tool processes run, resolved once
    /// by the supervisor (present when the child may run `python_execute`
    /// and an interpreter was found).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub python: Option<String>,
    /// The run this one continues (`run --resume`), when it does.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub resumed_from: Option<ResumedFrom>,
    /// The batch task this run is (`subagent batch`), so a re-run of the
    /// batch finds the run of a task that was in flight when it died.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub batch_task: Option<BatchTask>,
}

/// A task of a batch, named in the header of the run that ran it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchTask {
    /// The batch's results file (absolute).
    pub results: String,
    /// The task's id.
    pub id: String,
}

/// The recorded run a resumed run continues, named in its header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumedFrom {
    /// Its run id.
    pub run_id: String,
    /// Its session file, as it was read.
    pub file: String,
    /// Complete model turns of the recorded conversation (over every run
    /// it continued in turn) that this run started from.
    pub turns: u32,
}

/// Which protections a sandboxed child got.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxStatus {
    /// Protections in force (e.g. `process_group`, `rlimit_nofile`, `cgroup_memory`).
    pub applied: Vec<String>,
    /// Protections asked for but not in force, with why.
    pub not_applied: Vec<NotApplied>,
}

/// A protection that could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotApplied {
    /// The protection (e.g. `cgroup_memory`).
    pub protection: String,
    /// Why it is not in force.
    pub reason: String,
}

/// Lifecycle event kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LifecycleEvent {
    /// The child was started.
    #[serde(rename = "subagent:start")]
    Start,
    /// The child finished successfully.
    #[serde(rename = "subagent:complete")]
    Complete,
    /// The child failed.
    #[serde(rename = "subagent:error")]
    Error,
    /// The child was cancelled or killed from outside.
    #[serde(rename = "subagent:aborted")]
    Aborted,
}

/// Final status on an ending lifecycle line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LifecycleStatus {
    /// Success.
    Completed,
    /// Failure.
    Failed,
    /// Cancelled or killed from outside.
    Aborted,
}

/// The `agent_event` lifecycle line, in the child's file and the parent's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentEvent {
    /// Which lifecycle point.
    pub event_type: LifecycleEvent,
    /// Correlates start and end (the run id).
    pub job_id: String,
    /// Who asked: the user's login, or `assistant`.
    pub requested_by: String,
    /// Agent name.
    pub agent_name: String,
    /// single, parallel or chain (a lifecycle has no `management`: a
    /// management answer starts no child).
    pub mode: RunMode,
    /// The worker's pid, once known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pid: Option<u32>,
    /// When the child started.
    pub started_at: String,
    /// When it ended (end events only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub completed_at: Option<String>,
    /// Wall time, ms (end events only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub duration_ms: Option<u64>,
    /// Model id.
    pub model: String,
    /// Usage totals (end events only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub usage: Option<Usage>,
    /// Final status (end events only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub status: Option<LifecycleStatus>,
    /// A short summary for display and search.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub summary: Option<String>,
    /// The child's session file.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub session_file: Option<String>,
    /// Why the run failed or was aborted: on every ending whose status is
    /// `failed` or `aborted` (absent from endings written before it).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<EndingError>,
    /// The result's `stopReason` (`completed`, `max_tokens`, `max_turns`,
    /// `timeout`, ...), on endings of runs that got that far.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stop_reason: Option<String>,
}

/// The reason on a failed or aborted ending: the result's error code and
/// message, and the limit that ended the run when one did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndingError {
    /// The failure class, as `details.error.code` (`SUBAGENT_TIMEOUT`, ...).
    /// Text rather than `ErrorCode`: a code a newer writer adds must not
    /// make the whole ending unreadable to this reader.
    pub code: String,
    /// What happened and what to do next (secrets masked).
    pub message: String,
    /// The limit that ended the run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub limit: Option<LimitReached>,
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The system prompt.
    System,
    /// The task or a reminder.
    User,
    /// The model.
    Assistant,
}

/// A message line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageLine {
    /// Author.
    pub role: Role,
    /// Turn number (0 for messages before the first turn).
    pub turn: u32,
    /// The text.
    pub text: String,
    /// The provider's stop reason, on assistant messages.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stop_reason: Option<String>,
    /// The provider's id of the response, on assistant messages when it
    /// sent one (`responseId`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub response_id: Option<String>,
}

/// A tool call line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallLine {
    /// Turn number.
    pub turn: u32,
    /// Call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Arguments (invalid JSON is kept as a string).
    pub args: serde_json::Value,
}

/// A tool result line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultLine {
    /// Call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Output shown to the model.
    pub output: String,
    /// True when the tool failed.
    pub is_error: bool,
}

/// A usage line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageLine {
    /// Turn number.
    pub turn: u32,
    /// That turn's usage.
    pub usage: Usage,
}

/// Which output stream an excerpt comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// An excerpt of captured stdout or stderr.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputLine {
    /// Which stream.
    pub stream: Stream,
    /// Head and tail as kept (lossy UTF-8, secrets masked).
    pub excerpt: String,
    /// Bytes the child wrote.
    pub bytes_seen: u64,
    /// Bytes kept.
    pub bytes_kept: u64,
    /// True when bytes were dropped.
    pub truncated: bool,
}

/// A limit hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitLine {
    /// Which limit.
    pub limit: LimitKind,
    /// The configured value, in the limit's unit.
    pub value: u64,
    /// What was done.
    pub action: LimitAction,
    /// Free-text detail.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub detail: Option<String>,
}

/// Which limit a `limit` line is about, written in snake_case
/// (`wall_timeout`, `protocol_bytes`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// The wall timeout of the child (value: ms).
    WallTimeout,
    /// The idle timeout (value: ms).
    IdleTimeout,
    /// The caller cancelled the run (value: 0).
    Cancel,
    /// The worker outlived its window after `Cancel` or `Done` and gets
    /// SIGTERM, then SIGKILL after the grace (value: the grace, ms).
    KillGrace,
    /// Bytes the worker may send over the protocol socket (value: bytes).
    ProtocolBytes,
    /// Worker stdout captured before the group is killed (value: bytes).
    Stdout,
    /// Worker stderr captured before the group is killed (value: bytes).
    Stderr,
    /// Memory of the child's cgroup (value: bytes).
    Memory,
    /// Processes of the child's cgroup (value: count).
    Pids,
    /// Descendants still running after the worker exited (value: count).
    LeakedProcesses,
    /// A kind this version does not know, kept as written (a newer
    /// writer's line read by an older reader). Never written by this one.
    #[serde(untagged)]
    Unknown(String),
}

/// What the supervisor did about a limit, written in snake_case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitAction {
    /// Sent `Cancel` and waits for `Done` with the partial output.
    Cancel,
    /// SIGTERM to the process group, SIGKILL after the grace.
    Sigterm,
    /// SIGKILL to the process group at once.
    Sigkill,
    /// The kernel's OOM killer ended the child.
    OomKill,
    /// The kernel refused a fork.
    RefusedFork,
    /// An action this version does not know, kept as written. Never
    /// written by this one.
    #[serde(untagged)]
    Unknown(String),
}

/// Who wrote a `log` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogSource {
    /// The worker, through a `Log` event.
    Worker,
    /// The supervisor itself.
    Supervisor,
}

/// A log line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogLine {
    /// `debug`, `info`, `warn` or `error`.
    pub level: LogLevel,
    /// Who logged it: `worker` or `supervisor`.
    pub source: LogSource,
    /// The message.
    pub message: String,
}
