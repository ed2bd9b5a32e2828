//! The error codes a parent can match on (`details.error.code`).
//!
//! The first eight are the contract inherited from the result schema
//! reference and keep their meaning forever; later codes are appended (never
//! inserted: the wire encodes the variant index).

use std::fmt;

use serde::{Deserialize, Serialize};

/// A machine-readable failure class, serialized as a SCREAMING_SNAKE string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// A required parameter is missing or malformed (agent, task, schema, limits).
    InvalidInput,
    /// Subagents are switched off for this caller.
    SubagentsDisabled,
    /// No agent definition has that name.
    UnknownAgent,
    /// The agent is defined but disabled.
    SubagentDisabled,
    /// The caller is at the depth limit and may not spawn.
    SubagentDepthExceeded,
    /// The wall or idle timeout fired.
    SubagentTimeout,
    /// Anything else: spawn, session, runtime or provider failure.
    SubagentFailed,
    /// Output was truncated, or a child's output exceeded its hard limit.
    SubagentOutputTruncated,
    /// The turn or cost budget ran out; partial output is kept.
    SubagentBudgetExceeded,
    /// The parent cancelled the run.
    SubagentCancelled,
    /// The model never produced structured output that matched the schema.
    SubagentStructuredOutputInvalid,
    /// The embedding program's spawn gate (policy, budget) refused the spawn.
    SubagentSpawnDenied,
    /// A required protection could not be applied; the child was not started.
    SubagentSandboxUnavailable,
    /// The run's session file could not be created or completed (a full
    /// disk, an I/O error, a read-only or unwritable sessions dir): whatever
    /// the child did, its record is not whole, so the run is not `ok`.
    SubagentSessionLost,
}

impl ErrorCode {
    /// Every code, in wire order.
    pub const ALL: [ErrorCode; 14] = [
        ErrorCode::InvalidInput,
        ErrorCode::SubagentsDisabled,
        ErrorCode::UnknownAgent,
        ErrorCode::SubagentDisabled,
        ErrorCode::SubagentDepthExceeded,
        ErrorCode::SubagentTimeout,
        ErrorCode::SubagentFailed,
        ErrorCode::SubagentOutputTruncated,
        ErrorCode::SubagentBudgetExceeded,
        ErrorCode::SubagentCancelled,
        ErrorCode::SubagentStructuredOutputInvalid,
        ErrorCode::SubagentSpawnDenied,
        ErrorCode::SubagentSandboxUnavailable,
        ErrorCode::SubagentSessionLost,
    ];

    /// The code as it appears in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidInput => "INVALID_INPUT",
            ErrorCode::SubagentsDisabled => "SUBAGENTS_DISABLED",
            ErrorCode::UnknownAgent => "UNKNOWN_AGENT",
            ErrorCode::SubagentDisabled => "SUBAGENT_DISABLED",
            ErrorCode::SubagentDepthExceeded => "SUBAGENT_DEPTH_EXCEEDED",
            ErrorCode::SubagentTimeout => "SUBAGENT_TIMEOUT",
            ErrorCode::SubagentFailed => "SUBAGENT_FAILED",
            ErrorCode::SubagentOutputTruncated => "SUBAGENT_OUTPUT_TRUNCATED",
            ErrorCode::SubagentBudgetExceeded => "SUBAGENT_BUDGET_EXCEEDED",
            ErrorCode::SubagentCancelled => "SUBAGENT_CANCELLED",
            ErrorCode::SubagentStructuredOutputInvalid => "SUBAGENT_STRUCTURED_OUTPUT_INVALID",
            ErrorCode::SubagentSpawnDenied => "SUBAGENT_SPAWN_DENIED",
            ErrorCode::SubagentSandboxUnavailable => "SUBAGENT_SANDBOX_UNAVAILABLE",
            ErrorCode::SubagentSessionLost => "SUBAGENT_SESSION_LOST",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
