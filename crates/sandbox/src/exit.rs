//! How a sandboxed child ended: the raw status, the verdict
//! ([`Termination`]) and the rule that picks it, captured output and usage.
//!
//! The precedence rule lives in [`decide`] and nowhere else; it is pure so it
//! can be tested without processes.

use std::time::Duration;

use subagent_protocol::session::Stream;

use crate::capture::Captured;
use crate::cgroup::CgroupVerdict;
use crate::kill::KillReason;
use crate::unix::RawExit;

/// Why a child's run ended. Precedence when several apply: a recorded
/// [`KillReason`] wins; else an OOM kill (or a SIGKILL after the memory cap
/// was hit) gives `MemoryLimit`; else a pids-cap hit followed by an abnormal
/// exit gives `PidsLimit`; else leaked descendants give `Leaked`; else the
/// raw `Exited`/`Signaled`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Termination {
    /// The leader exited by itself with this code.
    Exited {
        /// Exit code.
        code: i32,
    },
    /// The leader was killed by a signal nobody here sent.
    Signaled {
        /// Signal number.
        signal: i32,
    },
    /// Killed for [`KillReason::Timeout`].
    Timeout,
    /// Killed for [`KillReason::IdleTimeout`].
    IdleTimeout,
    /// Killed because a stream passed its hard limit.
    OutputLimit {
        /// The stream that overflowed.
        stream: Stream,
    },
    /// The cgroup's OOM killer ended it.
    MemoryLimit,
    /// Killed for [`KillReason::DiskLimit`].
    DiskLimit,
    /// It hit the cgroup's pids cap and then failed.
    PidsLimit,
    /// Killed for [`KillReason::Cancelled`].
    Cancelled,
    /// Killed for a [`KillReason`] with no termination of its own, e.g. a
    /// protocol violation; `reason` is [`KillReason::describe`].
    Killed {
        /// The reason given to the kill handle.
        reason: String,
    },
    /// The leader exited but left descendants behind, which were killed.
    Leaked {
        /// The descendants that were killed.
        pids: Vec<u32>,
    },
}

impl Termination {
    /// A stable snake_case name for logs and session files.
    pub fn reason(&self) -> &'static str {
        match self {
            Termination::Exited { .. } => "exited",
            Termination::Signaled { .. } => "signaled",
            Termination::Timeout => "timeout",
            Termination::IdleTimeout => "idle_timeout",
            Termination::OutputLimit { .. } => "output_limit",
            Termination::MemoryLimit => "memory_limit",
            Termination::DiskLimit => "disk_limit",
            Termination::PidsLimit => "pids_limit",
            Termination::Cancelled => "cancelled",
            Termination::Killed { .. } => "killed",
            Termination::Leaked { .. } => "leaked",
        }
    }

    /// True only for a clean `exit(0)` with nothing left behind.
    pub fn is_success(&self) -> bool {
        matches!(self, Termination::Exited { code: 0 })
    }
}

/// Resource use of the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceUsage {
    /// Monotonic time from spawn to the leader's exit.
    pub wall: Duration,
    /// User + system CPU of the leader and the descendants it waited for.
    pub cpu: Duration,
    /// Peak resident set of the leader (or its largest waited-for child),
    /// bytes, as `wait4` reports it. The kernel folds into it the peak of
    /// the memory the leader had before its `exec`, which is ours (shared
    /// or copied at the spawn): so it is never below this process's own
    /// peak. [`peak_rss_since_exec`](crate::peak_rss_since_exec) read
    /// before the leader exits gives its own figure.
    pub peak_rss_bytes: u64,
}

/// Everything known about a finished child.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ChildExit {
    /// The verdict.
    pub termination: Termination,
    /// How the leader actually ended.
    pub raw: RawExit,
    /// Captured stdout.
    pub stdout: Captured,
    /// Captured stderr.
    pub stderr: Captured,
    /// Resource use.
    pub usage: ResourceUsage,
    /// Descendants still alive (or holding our pipes) after the leader
    /// exited, which were killed.
    pub leaked_pids: Vec<u32>,
    /// The child's own cgroup memory cap was reached. A `MemoryLimit` end
    /// without it came from an enclosing cgroup's cap (a tool process
    /// killed by its worker's), so a message names that one instead.
    pub own_memory_cap_hit: bool,
}

impl ChildExit {
    /// A child's end as the sandbox would report it, with nothing captured
    /// and no usage: for callers that test how they read an exit without
    /// running a process.
    pub fn of(termination: Termination, raw: RawExit) -> Self {
        Self {
            termination,
            raw,
            stdout: Captured::default(),
            stderr: Captured::default(),
            usage: ResourceUsage::default(),
            leaked_pids: Vec::new(),
            own_memory_cap_hit: false,
        }
    }
}

/// The precedence rule: a recorded kill reason wins; else an OOM kill (or a
/// SIGKILL after the memory limit was hit); else a pids-cap hit followed by an
/// abnormal exit; else leaked descendants; else the raw status.
pub(crate) fn decide(
    reason: Option<&KillReason>,
    raw: RawExit,
    cgroup: CgroupVerdict,
    leaked: &[u32],
) -> Termination {
    if let Some(reason) = reason {
        return match reason {
            KillReason::Timeout => Termination::Timeout,
            KillReason::IdleTimeout => Termination::IdleTimeout,
            KillReason::Cancelled => Termination::Cancelled,
            KillReason::OutputLimit(stream) => Termination::OutputLimit { stream: *stream },
            KillReason::DiskLimit => Termination::DiskLimit,
            KillReason::SocketSetupFailed
            | KillReason::NoHello
            | KillReason::ProtocolVersionMismatch
            | KillReason::ProtocolViolation
            | KillReason::ProtocolOutputLimit
            | KillReason::LingeredAfterDone => Termination::Killed {
                reason: reason.describe().to_owned(),
            },
        };
    }
    if cgroup.oom_killed || (cgroup.memory_limit_hit && raw == RawExit::Signaled(libc::SIGKILL)) {
        return Termination::MemoryLimit;
    }
    if cgroup.pids_limit_hit && raw != RawExit::Exited(0) {
        return Termination::PidsLimit;
    }
    if !leaked.is_empty() {
        return Termination::Leaked {
            pids: leaked.to_vec(),
        };
    }
    match raw {
        RawExit::Exited(code) => Termination::Exited { code },
        RawExit::Signaled(signal) => Termination::Signaled { signal },
    }
}

#[cfg(test)]
#[path = "exit_tests.rs"]
mod tests;
