//! The `subagent` binary's exit codes: the one place they are defined.
//!
//! Scripts can tell "the subagent failed" from "you called it wrong" from
//! "it ran out of time" without parsing output.

use subagent_protocol::ErrorCode;

/// The run succeeded.
pub const OK: i32 = 0;
/// The subagent failed (provider, runtime, crash, limits other than time).
pub const SUBAGENT_FAILED: i32 = 1;
/// The call was wrong: bad flags, bad schema, unknown agent, depth, refusal.
pub const INVALID_INPUT: i32 = 2;
/// The wall or idle timeout fired.
pub const TIMEOUT: i32 = 3;
/// The turn or cost budget ran out.
pub const BUDGET_EXCEEDED: i32 = 4;
/// Output was truncated or a child's output hit its hard limit.
pub const OUTPUT_TRUNCATED: i32 = 5;
/// A required protection could not be applied; nothing ran.
pub const SANDBOX_UNAVAILABLE: i32 = 6;
/// `subagent doctor` found something missing (each missing probe is
/// printed with its fix); distinct from 6 because nothing was refused.
pub const DOCTOR_MISSING: i32 = 7;
/// `subagent sessions replay` found the replay differs from the recording
/// (the first difference is printed); distinct from 1 because the replay
/// itself may have succeeded.
pub const REPLAY_DIVERGED: i32 = 8;
/// The run's session file could not be created or completed (a full disk,
/// an I/O error, a read-only sessions dir): the record is not whole, so the
/// run is not claimed as done whatever the child did. A batch also ends
/// with it when its results file was replaced while it ran (its record is
/// not where it was asked to be).
pub const SESSION_LOST: i32 = 9;
/// `subagent sessions verify` found a line whose chain value does not
/// hold (the first one is named); distinct from 2 because the call was
/// right and the file is not.
pub const SESSION_UNVERIFIED: i32 = 10;
/// Cancelled (SIGINT / SIGTERM to the supervisor): 128 + SIGINT by convention.
pub const CANCELLED: i32 = 130;

/// The exit code for a result's error code (`None` = success).
pub fn for_error(code: Option<ErrorCode>) -> i32 {
    match code {
        None => OK,
        Some(code) => match code {
            ErrorCode::InvalidInput
            | ErrorCode::UnknownAgent
            | ErrorCode::SubagentsDisabled
            | ErrorCode::SubagentDisabled
            | ErrorCode::SubagentDepthExceeded
            | ErrorCode::SubagentSpawnDenied => INVALID_INPUT,
            ErrorCode::SubagentTimeout => TIMEOUT,
            ErrorCode::SubagentBudgetExceeded => BUDGET_EXCEEDED,
            ErrorCode::SubagentOutputTruncated => OUTPUT_TRUNCATED,
            ErrorCode::SubagentSandboxUnavailable => SANDBOX_UNAVAILABLE,
            ErrorCode::SubagentCancelled => CANCELLED,
            ErrorCode::SubagentSessionLost => SESSION_LOST,
            ErrorCode::SubagentFailed | ErrorCode::SubagentStructuredOutputInvalid => {
                SUBAGENT_FAILED
            }
        },
    }
}
