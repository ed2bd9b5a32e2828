//! The messages that cross fd 3, one per frame.
//!
//! Direction is in the type: the supervisor sends [`ToWorker`], the worker
//! sends [`FromWorker`]. Variants are only ever appended (bincode encodes the
//! variant index); any other change bumps [`crate::PROTOCOL_VERSION`].

use serde::{Deserialize, Serialize};

use crate::error_code::ErrorCode;
use crate::task_spec::TaskSpec;
use crate::usage::Usage;

/// Supervisor -> worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ToWorker {
    /// Run this task. Sent once, after a matching `Hello`.
    Start(Box<TaskSpec>),
    /// Stop now: abort the model request and any tool, then send `Done`.
    Cancel {
        /// Why, for the record (e.g. "wall timeout").
        reason: String,
    },
    /// Liveness probe; answered with `Pong`.
    Ping,
    /// How a subagent the worker asked for with
    /// [`FromWorker::SpawnSubagent`] ended (protocol 3).
    SubagentResult(Box<SubagentReply>),
    /// The interpreter of `python_execute`, when `Start` carried
    /// [`crate::PythonInterpreter::Pending`]; sent once, never `Pending`
    /// (protocol 7).
    Python(crate::PythonInterpreter),
}

/// Worker -> supervisor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FromWorker {
    /// The first frame a worker sends.
    Hello(Hello),
    /// Progress of the run.
    Event(WorkerEvent),
    /// Answer to `Ping`.
    Pong,
    /// The last frame: how the run ended. Sent exactly once.
    Done(Box<Outcome>),
    /// The model called the `subagent` tool: the supervisor, the only
    /// process that starts workers, admits and runs the grandchild and
    /// answers with [`ToWorker::SubagentResult`] of the same `call_id`
    /// (protocol 3).
    SpawnSubagent(Box<SpawnRequest>),
}

/// A worker's request for a nested subagent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpawnRequest {
    /// The tool call this answers; echoed in the reply.
    pub call_id: String,
    /// Agent name for the grandchild.
    pub agent: String,
    /// Its task.
    pub task: String,
    /// JSON Schema (as JSON text) its output must satisfy, if any.
    pub output_schema_json: Option<String>,
    /// Turns the caller offers it (at most what the caller has left).
    pub max_turns: Option<u32>,
    /// Dollars the caller offers it (at most what the caller has left).
    pub max_cost: Option<f64>,
    /// Tools it asks for; at most its caller's (the supervisor refuses
    /// more). `None`: its agent's, cut down to its caller's.
    pub tools: Option<Vec<String>>,
    /// Limits it asks for, as a JSON object in agent-file keys (JSON text:
    /// bincode carries no `serde_json::Value`); at most its caller's.
    pub limits_json: Option<String>,
}

/// The supervisor's answer to a [`SpawnRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubagentReply {
    /// The request's `call_id`.
    pub call_id: String,
    /// True when the grandchild was refused or failed.
    pub is_error: bool,
    /// What the tool shows the model: the grandchild's text or structured
    /// output (JSON text), or why it failed.
    pub output: String,
    /// What the grandchild spent; the caller adds it to its own budget.
    pub usage: Usage,
    /// Why it failed, when it did.
    pub error_code: Option<ErrorCode>,
}

/// The worker's handshake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// Must equal the supervisor's [`crate::PROTOCOL_VERSION`].
    pub protocol_version: u32,
    /// The worker's crate version, for diagnostics.
    pub worker_version: String,
    /// The worker's process id.
    pub pid: u32,
}

impl Hello {
    /// The `Hello` of a worker built from this crate version.
    pub fn current(worker_version: impl Into<String>) -> Self {
        Self {
            protocol_version: crate::PROTOCOL_VERSION,
            worker_version: worker_version.into(),
            pid: std::process::id(),
        }
    }
}

/// Severity of a [`WorkerEvent::Log`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Diagnostic detail.
    Debug,
    /// Normal progress worth recording.
    Info,
    /// Something recovered from (e.g. a retried request).
    Warn,
    /// Something that failed.
    Error,
}

/// Progress of a run, streamed as it happens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum WorkerEvent {
    /// A model turn (one request) begins.
    TurnStart {
        /// 1-based turn number.
        turn: u32,
    },
    /// A piece of assistant text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A piece of reasoning summary text.
    ReasoningDelta {
        /// The text.
        text: String,
    },
    /// The model called a tool (arguments complete).
    ToolCall {
        /// Turn the call belongs to.
        turn: u32,
        /// Provider's call id.
        call_id: String,
        /// Tool name.
        name: String,
        /// Arguments as JSON text (possibly invalid JSON: it is the model's).
        arguments_json: String,
    },
    /// A tool call finished.
    ToolResult {
        /// The call's id.
        call_id: String,
        /// Tool name.
        name: String,
        /// What the model is shown (already capped).
        output: String,
        /// True when the tool failed or was refused.
        is_error: bool,
    },
    /// The assistant message of a turn is complete.
    AssistantMessageEnd {
        /// Turn number.
        turn: u32,
        /// The whole assistant text of the turn.
        text: String,
        /// The provider's stop reason (`stop`, `tool_calls`, `end_turn`, ...).
        stop_reason: String,
        /// The provider's id of the response, when it sent a usable one
        /// ([`crate::text::response_id`]; protocol 10).
        response_id: Option<String>,
    },
    /// Usage of one turn.
    Usage {
        /// Turn number.
        turn: u32,
        /// Tokens and cost of that turn (`turns` is 1).
        usage: Usage,
    },
    /// A log line for the session file.
    Log {
        /// Severity.
        level: LogLevel,
        /// The message.
        message: String,
    },
    /// The loop sent the model a user message of its own (a reminder to
    /// call `report_back`), so the session file holds the whole
    /// conversation a resumed run continues (protocol 6).
    UserMessage {
        /// The turn it follows.
        turn: u32,
        /// The text.
        text: String,
    },
}

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model ended its turn without tool calls.
    Completed,
    /// A valid `report_back` call ended the task.
    ReportBack,
    /// The turn budget ran out.
    MaxTurns,
    /// The cost budget ran out.
    MaxCost,
    /// A `Cancel` arrived.
    Cancelled,
    /// A provider or runtime error ended the run.
    Error,
}

impl StopReason {
    /// The reason as recorded in results and session files.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Completed => "completed",
            StopReason::ReportBack => "report_back",
            StopReason::MaxTurns => "max_turns",
            StopReason::MaxCost => "max_cost",
            StopReason::Cancelled => "cancelled",
            StopReason::Error => "error",
        }
    }
}

/// A failure the worker reports in `Done`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutcomeError {
    /// Failure class.
    pub code: ErrorCode,
    /// Readable message (what happened and what to do next).
    pub message: String,
}

impl Outcome {
    /// A run that failed before producing anything: no text, no usage.
    pub fn failure(model: impl Into<String>, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            final_text: String::new(),
            structured_output_json: None,
            usage: Usage::default(),
            stop_reason: StopReason::Error,
            error: Some(OutcomeError {
                code,
                message: message.into(),
            }),
            model: model.into(),
        }
    }
}

/// How a run ended, as the worker saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Final assistant text (or the JSON text of structured output). May be
    /// partial when the run failed.
    pub final_text: String,
    /// Structured output as JSON text, when a schema was given and met.
    pub structured_output_json: Option<String>,
    /// Totals over all turns.
    pub usage: Usage,
    /// Why it stopped.
    pub stop_reason: StopReason,
    /// Set when the run failed.
    pub error: Option<OutcomeError>,
    /// The model that answered.
    pub model: String,
}
