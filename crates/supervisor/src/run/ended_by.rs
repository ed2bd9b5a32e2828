//! Which limit ended a failed run, for the result's `limit` and the
//! ending line of its session file: the supervisor's own cause first
//! (it knows why it intervened), then what the sandbox saw, then the
//! worker's budget.
//!
//! A pure function of what `assemble` already holds; it decides no
//! outcome (whether the run failed is `assemble`'s call).

use subagent_protocol::StopReason;
use subagent_protocol::result::{LimitName, LimitReached};
use subagent_protocol::session::Stream;
use subagent_sandbox::Termination;

use super::assemble::{Assembly, ChildRun, SupervisorCause};

/// The limit that ended a failed run, when one did: the supervisor's own
/// cause first, then what the sandbox saw, then the worker's budget.
pub(super) fn limit_reached(a: &Assembly, run: &ChildRun) -> Option<LimitReached> {
    let l = &a.limits;
    let count = LimitReached::count;
    match &run.cause {
        Some(SupervisorCause::WallTimeout) => {
            return Some(count(LimitName::WallTimeoutMs, l.wall_timeout_ms));
        }
        Some(SupervisorCause::IdleTimeout) => {
            return Some(count(LimitName::IdleTimeoutMs, l.idle_timeout_ms));
        }
        Some(SupervisorCause::ProtocolFlood) => {
            return Some(count(LimitName::ProtocolBytes, l.protocol_bytes));
        }
        Some(SupervisorCause::Cancelled | SupervisorCause::Protocol(_)) | None => {}
    }
    if let Some(exit) = &run.exit {
        let hit = match &exit.termination {
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
    match run.outcome.as_ref().map(|o| o.stop_reason) {
        Some(StopReason::MaxTurns) => {
            Some(count(LimitName::MaxTurns, u64::from(a.budget.max_turns)))
        }
        Some(StopReason::MaxCost) => a
            .budget
            .max_cost
            .and_then(|d| LimitReached::dollars(LimitName::MaxCost, d)),
        _ => None,
    }
}

#[cfg(test)]
#[path = "ended_by_tests.rs"]
mod tests;
