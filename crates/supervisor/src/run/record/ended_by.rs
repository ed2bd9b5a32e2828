//! Which limit ended a failed run, for the result's `limit` and the
//! ending line of its session file: the supervisor's own cause first
//! (it knows why it intervened), then what the sandbox saw, then the
//! worker's budget.
//!
//! A pure function of what `assemble` already holds; it decides no
//! outcome (whether the run failed is `assemble`'s call).

use subagent_protocol::result::{LimitName, LimitReached};
use subagent_protocol::session::Stream;
use subagent_protocol::{Budget, Limits, StopReason};
use subagent_sandbox::Termination;

use crate::run::record::stop::StopCause;

/// What `assemble` knows of how a run ended, lent for the question of
/// which limit ended it (its own type so this module needs nothing of
/// `assemble`'s).
pub(in crate::run) struct EndedBy<'a> {
    pub(in crate::run) limits: &'a Limits,
    pub(in crate::run) budget: &'a Budget,
    /// The supervisor's own cause, when it intervened.
    pub(in crate::run) cause: Option<&'a StopCause>,
    /// How the sandbox saw the tree end, when it ended.
    pub(in crate::run) termination: Option<&'a Termination>,
    /// The worker's reason from `Done`, when it sent one.
    pub(in crate::run) stop_reason: Option<StopReason>,
}

/// The limit that ended a failed run, when one did: the supervisor's own
/// cause first, then what the sandbox saw, then the worker's budget.
pub(in crate::run) fn limit_reached(run: EndedBy<'_>) -> Option<LimitReached> {
    let l = run.limits;
    let count = LimitReached::count;
    match run.cause {
        Some(StopCause::WallTimeout) => {
            return Some(count(LimitName::WallTimeoutMs, l.wall_timeout_ms));
        }
        Some(StopCause::IdleTimeout) => {
            return Some(count(LimitName::IdleTimeoutMs, l.idle_timeout_ms));
        }
        Some(StopCause::ProtocolFlood) => {
            return Some(count(LimitName::ProtocolBytes, l.protocol_bytes));
        }
        Some(StopCause::Cancelled | StopCause::Protocol(..)) | None => {}
    }
    if let Some(termination) = run.termination {
        let hit = match termination {
            Termination::OutputLimit { stream } => Some(match stream {
                Stream::Stdout => count(LimitName::StdoutBytes, l.stdout_bytes),
                Stream::Stderr => count(LimitName::StderrBytes, l.stderr_bytes),
            }),
            Termination::MemoryLimit => Some(count(LimitName::MemoryBytes, l.memory_bytes)),
            Termination::PidsLimit => Some(count(LimitName::Pids, l.pids)),
            Termination::Timeout => Some(count(LimitName::WallTimeoutMs, l.wall_timeout_ms)),
            Termination::IdleTimeout => Some(count(LimitName::IdleTimeoutMs, l.idle_timeout_ms)),
            _ => None,
        };
        if hit.is_some() {
            return hit;
        }
    }
    match run.stop_reason {
        Some(StopReason::MaxTurns) => {
            Some(count(LimitName::MaxTurns, u64::from(run.budget.max_turns)))
        }
        Some(StopReason::MaxCost) => run
            .budget
            .max_cost
            .and_then(|d| LimitReached::dollars(LimitName::MaxCost, d)),
        _ => None,
    }
}

#[cfg(test)]
#[path = "ended_by_tests.rs"]
mod tests;
