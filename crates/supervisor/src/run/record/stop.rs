//! The ending table, written once: why a run stopped -> how the worker is
//! stopped, the kill reason the sandbox records, the session file's limit
//! line, the result's error and its `stopReason` word.
//!
//! Two rows of causes: the supervisor's own ([`StopCause`], it intervened)
//! and what the sandbox saw when the worker's tree ended
//! ([`Termination`]). The watch acts on the first, the session record and
//! the assembly read both; none of them interprets an ending by itself.
//!
//! Pure: nothing here starts, kills or writes anything.

use subagent_protocol::result::SubagentResult;
use subagent_protocol::session::{LifecycleEvent, LifecycleStatus, LimitAction, LimitKind, Stream};
use subagent_protocol::{ErrorCode, Limits};
use subagent_sandbox::{KillReason, RawExit, Termination};

use crate::run::config::HELLO_TIMEOUT;

/// Why the supervisor itself stopped a run (as opposed to the worker).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::run) enum StopCause {
    /// The wall timeout fired.
    WallTimeout,
    /// No progress for the idle timeout.
    IdleTimeout,
    /// The caller cancelled before `Done`.
    Cancelled,
    /// The worker broke the protocol; the message says how.
    Protocol(ProtocolBreak, String),
    /// The worker sent more than `limits.protocol_bytes`.
    ProtocolFlood,
}

/// The ways a worker can break the protocol, each stopped its own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::run) enum ProtocolBreak {
    /// The supervisor's end of the socket could not be used.
    SocketSetup,
    /// No `Hello` within [`HELLO_TIMEOUT`].
    NoHello,
    /// `Hello` named another protocol version.
    VersionMismatch,
    /// A bad frame, or a message out of order.
    Violation,
}

/// How the worker is made to stop for a cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::run) enum StopHow {
    /// `Cancel` with this reason, then a window to send `Done` with its
    /// partial output, then SIGTERM and SIGKILL after the grace.
    CancelFirst(&'static str),
    /// SIGTERM to its group now, SIGKILL after the grace.
    Terminate,
    /// SIGKILL to its group now: it can no longer be talked to.
    KillNow,
}

/// A `limit` line of the session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::run) struct LimitHit {
    pub kind: LimitKind,
    pub value: u64,
    pub action: LimitAction,
    pub detail: Option<String>,
}

impl LimitHit {
    fn new(kind: LimitKind, value: u64, action: LimitAction, detail: Option<&str>) -> Self {
        Self {
            kind,
            value,
            action,
            detail: detail.map(str::to_owned),
        }
    }
}

/// The message of a run stopped for [`ProtocolBreak::NoHello`].
pub(in crate::run) fn no_hello_message() -> String {
    format!(
        "the worker sent no Hello within {} ms of starting",
        HELLO_TIMEOUT.as_millis()
    )
}

impl StopCause {
    /// How the watch stops the worker for this cause.
    pub(in crate::run) fn how(&self) -> StopHow {
        match self {
            Self::WallTimeout => StopHow::CancelFirst("wall timeout"),
            Self::IdleTimeout => StopHow::CancelFirst("idle timeout"),
            Self::Cancelled => StopHow::CancelFirst("cancelled by the caller"),
            Self::Protocol(ProtocolBreak::NoHello | ProtocolBreak::VersionMismatch, _) => {
                StopHow::Terminate
            }
            Self::Protocol(ProtocolBreak::SocketSetup | ProtocolBreak::Violation, _)
            | Self::ProtocolFlood => StopHow::KillNow,
        }
    }

    /// The reason the sandbox records for the kill (and reports back as
    /// the exit's [`Termination`]).
    pub(in crate::run) fn kill_reason(&self) -> KillReason {
        match self {
            Self::WallTimeout => KillReason::Timeout,
            Self::IdleTimeout => KillReason::IdleTimeout,
            Self::Cancelled => KillReason::Cancelled,
            Self::Protocol(ProtocolBreak::SocketSetup, _) => KillReason::SocketSetupFailed,
            Self::Protocol(ProtocolBreak::NoHello, _) => KillReason::NoHello,
            Self::Protocol(ProtocolBreak::VersionMismatch, _) => {
                KillReason::ProtocolVersionMismatch
            }
            Self::Protocol(ProtocolBreak::Violation, _) => KillReason::ProtocolViolation,
            Self::ProtocolFlood => KillReason::ProtocolOutputLimit,
        }
    }

    /// The session file's `limit` line for this cause, if it is a limit.
    pub(in crate::run) fn limit_hit(&self, limits: &Limits) -> Option<LimitHit> {
        Some(match self {
            Self::WallTimeout => LimitHit::new(
                LimitKind::WallTimeout,
                limits.wall_timeout_ms,
                LimitAction::Cancel,
                None,
            ),
            Self::IdleTimeout => LimitHit::new(
                LimitKind::IdleTimeout,
                limits.idle_timeout_ms,
                LimitAction::Cancel,
                None,
            ),
            Self::Cancelled => LimitHit::new(
                LimitKind::Cancel,
                0,
                LimitAction::Cancel,
                Some("cancelled by the caller"),
            ),
            Self::ProtocolFlood => LimitHit::new(
                LimitKind::ProtocolBytes,
                limits.protocol_bytes,
                LimitAction::Sigkill,
                None,
            ),
            Self::Protocol(..) => return None,
        })
    }

    /// The result's error code and message.
    pub(in crate::run) fn error(&self, limits: &Limits) -> (ErrorCode, String) {
        match self {
            Self::WallTimeout => (
                ErrorCode::SubagentTimeout,
                format!(
                    "subagent timed out after {} s (wall timeout); partial output is kept. Raise the timeout or split the task.",
                    secs(limits.wall_timeout_ms)
                ),
            ),
            Self::IdleTimeout => (
                ErrorCode::SubagentTimeout,
                format!(
                    "subagent made no model or tool progress for {} s (idle timeout); partial output is kept",
                    secs(limits.idle_timeout_ms)
                ),
            ),
            Self::Cancelled => (
                ErrorCode::SubagentCancelled,
                "subagent cancelled by the caller; partial output is kept".to_owned(),
            ),
            Self::Protocol(_, message) => (ErrorCode::SubagentFailed, message.clone()),
            Self::ProtocolFlood => (
                ErrorCode::SubagentOutputTruncated,
                format!(
                    "the worker sent more than {} bytes over the protocol socket and was killed",
                    limits.protocol_bytes
                ),
            ),
        }
    }

    /// The result's `stopReason`.
    pub(in crate::run) fn stop_word(&self) -> &'static str {
        match self {
            Self::WallTimeout => "timeout",
            Self::IdleTimeout => "idle_timeout",
            Self::Cancelled => "cancelled",
            Self::Protocol(..) => "protocol_error",
            Self::ProtocolFlood => "output_limit",
        }
    }
}

/// The session file's `limit` line for how the sandbox saw the tree end,
/// if it ended at a limit.
pub(in crate::run) fn termination_limit_hit(
    termination: &Termination,
    limits: &Limits,
) -> Option<LimitHit> {
    Some(match termination {
        Termination::OutputLimit { stream } => {
            let (kind, value) = match stream {
                Stream::Stdout => (LimitKind::Stdout, limits.stdout_bytes),
                Stream::Stderr => (LimitKind::Stderr, limits.stderr_bytes),
            };
            LimitHit::new(
                kind,
                value,
                LimitAction::Sigkill,
                Some("output hard limit reached; process group killed"),
            )
        }
        Termination::MemoryLimit => LimitHit::new(
            LimitKind::Memory,
            limits.memory_bytes,
            LimitAction::OomKill,
            None,
        ),
        Termination::PidsLimit => {
            LimitHit::new(LimitKind::Pids, limits.pids, LimitAction::RefusedFork, None)
        }
        Termination::Leaked { pids } => LimitHit {
            kind: LimitKind::LeakedProcesses,
            value: pids.len() as u64,
            action: LimitAction::Sigkill,
            detail: Some(format!(
                "descendants still running after the worker exited: {pids:?}"
            )),
        },
        _ => return None,
    })
}

/// The result's error for how the sandbox saw the tree end, when that
/// alone fails the run (a limit, a kill); `None` leaves it to `Done`.
pub(in crate::run) fn termination_error(
    termination: &Termination,
    limits: &Limits,
) -> Option<(ErrorCode, String)> {
    Some(match termination {
        Termination::OutputLimit { stream } => {
            let (name, cap) = match stream {
                Stream::Stdout => ("stdout", limits.stdout_bytes),
                Stream::Stderr => ("stderr", limits.stderr_bytes),
            };
            (
                ErrorCode::SubagentOutputTruncated,
                format!(
                    "the worker wrote more than {cap} bytes to {name} and was killed (output hard limit)"
                ),
            )
        }
        Termination::MemoryLimit => (
            ErrorCode::SubagentFailed,
            format!(
                "the worker was killed at its memory limit of {} bytes; raise the memory limit if the task needs more",
                limits.memory_bytes
            ),
        ),
        Termination::PidsLimit => (
            ErrorCode::SubagentFailed,
            format!(
                "the worker hit its process limit of {} and failed",
                limits.pids
            ),
        ),
        Termination::Timeout | Termination::IdleTimeout => {
            (ErrorCode::SubagentTimeout, "subagent timed out".to_owned())
        }
        Termination::Cancelled => (
            ErrorCode::SubagentCancelled,
            "subagent cancelled".to_owned(),
        ),
        _ => return None,
    })
}

/// The error of a worker that ended without `Done` and without a limit.
pub(in crate::run) fn no_result_error(raw: RawExit) -> (ErrorCode, String) {
    (
        ErrorCode::SubagentFailed,
        match raw {
            RawExit::Exited(code) => {
                format!("the worker exited with status {code} before reporting a result")
            }
            RawExit::Signaled(sig) => format!(
                "the worker was killed by signal {} ({sig}) before reporting a result",
                signal_name(sig)
            ),
        },
    )
}

/// `SIGSEGV` for 11, from the platform's own table.
fn signal_name(sig: i32) -> &'static str {
    nix::sys::signal::Signal::try_from(sig).map_or("an unknown signal", |s| s.as_str())
}

fn secs(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

/// The ending lifecycle event and status of a run or job that returned
/// `result`: `subagent:aborted`/aborted when it was cancelled,
/// `subagent:error`/failed when it failed, else `subagent:complete`/completed.
pub(crate) fn ending_of(result: &SubagentResult) -> (LifecycleEvent, LifecycleStatus) {
    let cancelled = result
        .details
        .error
        .as_ref()
        .is_some_and(|e| e.code == subagent_protocol::ErrorCode::SubagentCancelled);
    if cancelled {
        (LifecycleEvent::Aborted, LifecycleStatus::Aborted)
    } else if result.details.error.is_some() {
        (LifecycleEvent::Error, LifecycleStatus::Failed)
    } else {
        (LifecycleEvent::Complete, LifecycleStatus::Completed)
    }
}

#[cfg(test)]
#[path = "stop_tests.rs"]
mod tests;
