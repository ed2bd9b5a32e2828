//! The one table from how a command ended to the `subagent` binary's exit
//! status: every status is defined here and chosen by [`exit_status`],
//! one exhaustive match. Commands report an [`Ending`] or fail with a
//! [`CliError`]; the libraries report causes (error codes, a batch's stop
//! cause), never numbers. Scripts can tell "the subagent failed" from "you
//! called it wrong" from "it ran out of time" without parsing output.
//!
//! Must not print, and must not decide anything but the number.

use subagent_protocol::ErrorCode;
use subagent_supervisor::batch::BatchStopCause;

use crate::error::CliError;

/// The run succeeded.
pub const OK: i32 = 0;
/// The subagent failed (provider, runtime, crash, limits other than time),
/// or something it needed did not start (the worker, the async runtime).
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
/// A record of the run did not reach where it was asked to be: the
/// session file could not be created or completed (a full disk, an I/O
/// error, a read-only sessions dir), a batch's results file could not be
/// written or was replaced while it ran, or the result could not be
/// written to stdout. The run is not claimed as done whatever the child
/// did.
pub const RECORD_LOST: i32 = 9;
/// `subagent sessions verify` found a line whose chain value does not
/// hold (the first one is named); distinct from 2 because the call was
/// right and the file is not.
pub const SESSION_UNVERIFIED: i32 = 10;
/// Cancelled (SIGINT / SIGTERM to the supervisor): 128 + SIGINT by convention.
pub const CANCELLED: i32 = 130;

/// How a command ended when it could say so itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Done as asked.
    Success,
    /// A run (`run`, `call`) ended with this error, or none.
    Run(Option<ErrorCode>),
    /// Some of a batch's tasks failed or timed out (now or as recorded), or
    /// `batch verify` found tasks missing.
    TasksFailed,
    /// A batch stopped before its end, for this cause.
    BatchStopped(BatchStopCause),
    /// Nothing was started: the worker program cannot be started.
    WorkerMissing,
    /// Nothing was started: the sessions dir cannot take a session file.
    SessionsDirUnwritable,
    /// The command read its input and refused it (an agent file or config
    /// that does not check, a `-j` beyond the open-files limit).
    InputRefused,
    /// `apply` left changes unapplied (a conflict or a refusal).
    ChangesLeft,
    /// `doctor` found something missing.
    DoctorMissing,
    /// `sessions replay` differs from the recording.
    ReplayDiverged,
    /// `sessions verify` found a line whose chain does not hold.
    SessionUnverified,
    /// A signal stopped the command.
    Cancelled,
}

/// The exit status of a command that ended as `ended`.
pub fn exit_status(ended: &Result<Ending, CliError>) -> i32 {
    match ended {
        Ok(Ending::Success) => OK,
        Ok(Ending::Run(code)) => for_error(*code),
        Ok(Ending::TasksFailed | Ending::ChangesLeft) => SUBAGENT_FAILED,
        Ok(Ending::BatchStopped(BatchStopCause::ResultsLost)) => RECORD_LOST,
        Ok(Ending::BatchStopped(BatchStopCause::TaskFault(code))) => for_error(Some(*code)),
        Ok(Ending::WorkerMissing) => SUBAGENT_FAILED,
        Ok(Ending::SessionsDirUnwritable) => RECORD_LOST,
        Ok(Ending::InputRefused) => INVALID_INPUT,
        Ok(Ending::DoctorMissing) => DOCTOR_MISSING,
        Ok(Ending::ReplayDiverged) => REPLAY_DIVERGED,
        Ok(Ending::SessionUnverified) => SESSION_UNVERIFIED,
        Ok(Ending::Cancelled) => CANCELLED,
        Err(CliError::Usage(e)) if !e.use_stderr() => OK,
        Err(CliError::Usage(_) | CliError::Input(_)) => INVALID_INPUT,
        Err(CliError::Doctor(_)) => DOCTOR_MISSING,
        Err(CliError::Runtime(_)) => SUBAGENT_FAILED,
        Err(CliError::RecordLost(_)) => RECORD_LOST,
    }
}

/// The exit status for a result's error code (`None` = success): a run's,
/// and what a batch's results line says a run of its task would exit with
/// (`cliExit`).
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
            ErrorCode::SubagentSessionLost => RECORD_LOST,
            ErrorCode::SubagentFailed | ErrorCode::SubagentStructuredOutputInvalid => {
                SUBAGENT_FAILED
            }
        },
    }
}

#[cfg(test)]
#[path = "exit_tests.rs"]
mod tests;
