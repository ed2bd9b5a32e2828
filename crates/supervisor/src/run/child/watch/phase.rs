//! Where a worker is in its run, as the watch sees it: one [`Phase`] whose
//! variants carry what that phase knows (the cause of a stop, the outcome
//! of a `Done`, the escalation deadline), and the rules for moving on.
//!
//! Pure: it decides nothing about processes and sends nothing. Whether the
//! worker's tree is gone and whether its frames are all read are not
//! phases: they end independently of the phase and of each other (a `Done`
//! can be read after the tree is reaped), so the watch loop keeps them
//! beside the phase as its two channels' states.

use subagent_protocol::Outcome;
use subagent_sandbox::KillReason;
use tokio::time::Instant;

use crate::run::record::stop::{StopCause, StopHow};

/// The worker's run, from the supervisor's side.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Phase {
    /// Spawned; no `Hello` yet.
    AwaitingHello,
    /// `Hello` matched and `Start` is sent; the worker is working.
    Running,
    /// The worker sent `Done`: the run's outcome is fixed. `at`: when it
    /// is terminated if it has not exited by then. `cancel_heard`: the
    /// caller's cancel came after `Done` and was passed on; it is heard once.
    Reported {
        outcome: Outcome,
        at: Option<Instant>,
        cancel_heard: bool,
    },
    /// The supervisor intervened for `cause`. `at`: when the worker is
    /// terminated if it has not exited by then (the end of a cancel window,
    /// or of the window after an earlier `Done`). `greeted`: its `Hello`
    /// came. `outcome`: its `Done`, sent before or within the window.
    Stopping {
        cause: StopCause,
        at: Option<Instant>,
        greeted: bool,
        outcome: Option<Outcome>,
    },
}

/// `Done` came a second time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DoneTwice;

impl Phase {
    /// Whether `Hello` came (a message before it breaks the protocol).
    pub(super) fn greeted(&self) -> bool {
        match self {
            Self::AwaitingHello => false,
            Self::Running | Self::Reported { .. } => true,
            Self::Stopping { greeted, .. } => *greeted,
        }
    }

    /// No `Done` yet and no intervention: the run's deadlines apply.
    pub(super) fn working(&self) -> bool {
        matches!(self, Self::AwaitingHello | Self::Running)
    }

    pub(super) fn cause(&self) -> Option<&StopCause> {
        match self {
            Self::Stopping { cause, .. } => Some(cause),
            _ => None,
        }
    }

    pub(super) fn outcome(&self) -> Option<&Outcome> {
        match self {
            Self::Reported { outcome, .. } => Some(outcome),
            Self::Stopping { outcome, .. } => outcome.as_ref(),
            Self::AwaitingHello | Self::Running => None,
        }
    }

    /// When the worker is terminated if it has not exited by itself.
    pub(super) fn escalate_at(&self) -> Option<Instant> {
        match self {
            Self::Reported { at, .. } | Self::Stopping { at, .. } => *at,
            Self::AwaitingHello | Self::Running => None,
        }
    }

    /// Whether a caller's cancel still matters: not once the supervisor has
    /// a cause of its own, and only once after `Done`.
    pub(super) fn hears_cancel(&self) -> bool {
        match self {
            Self::AwaitingHello | Self::Running => true,
            Self::Reported { cancel_heard, .. } => !cancel_heard,
            Self::Stopping { .. } => false,
        }
    }

    /// The caller's cancel after `Done`: heard, nothing else changes.
    pub(super) fn hear_cancel_after_done(&mut self) {
        if let Self::Reported { cancel_heard, .. } = self {
            *cancel_heard = true;
        }
    }

    /// The first `Hello` came.
    pub(super) fn greet(&mut self) {
        match self {
            Self::AwaitingHello => *self = Self::Running,
            Self::Stopping { greeted, .. } => *greeted = true,
            Self::Running | Self::Reported { .. } => {}
        }
    }

    /// The supervisor intervenes for `cause` (replacing an earlier one: the
    /// callers check [`Self::cause`] where the first must win). A cause
    /// stopped with a `Cancel` gets its window until `now + window`; any
    /// other keeps the deadline it found.
    pub(super) fn stop(&mut self, cause: StopCause, now: Instant, window: std::time::Duration) {
        let cancel_first = matches!(cause.how(), StopHow::CancelFirst(_));
        let (greeted, outcome, found_at) = match std::mem::replace(self, Self::AwaitingHello) {
            Self::AwaitingHello => (false, None, None),
            Self::Running => (true, None, None),
            Self::Reported { outcome, at, .. } => (true, Some(outcome), at),
            Self::Stopping {
                greeted,
                outcome,
                at,
                ..
            } => (greeted, outcome, at),
        };
        *self = Self::Stopping {
            cause,
            at: if cancel_first {
                Some(now + window)
            } else {
                found_at
            },
            greeted,
            outcome,
        };
    }

    /// The worker sent `Done`: its outcome is kept (the first one only),
    /// and it has until `now + window` to exit unless a deadline already
    /// runs.
    pub(super) fn report(
        &mut self,
        done: Outcome,
        now: Instant,
        window: std::time::Duration,
    ) -> Result<(), DoneTwice> {
        match self {
            Self::AwaitingHello | Self::Running => {
                *self = Self::Reported {
                    outcome: done,
                    at: Some(now + window),
                    cancel_heard: false,
                };
                Ok(())
            }
            Self::Reported { .. }
            | Self::Stopping {
                outcome: Some(_), ..
            } => Err(DoneTwice),
            Self::Stopping { outcome, at, .. } => {
                *outcome = Some(done);
                at.get_or_insert(now + window);
                Ok(())
            }
        }
    }

    /// The escalation deadline passed: it is cleared, and the kill reason
    /// is the cause that gave the worker its window, or its lingering after
    /// `Done`.
    pub(super) fn escalate(&mut self) -> KillReason {
        match self {
            Self::Reported { at, .. } => {
                *at = None;
                KillReason::LingeredAfterDone
            }
            Self::Stopping { cause, at, .. } => {
                *at = None;
                match cause.how() {
                    StopHow::CancelFirst(_) => cause.kill_reason(),
                    StopHow::Terminate | StopHow::KillNow => KillReason::LingeredAfterDone,
                }
            }
            Self::AwaitingHello | Self::Running => KillReason::LingeredAfterDone,
        }
    }

    /// What the run produced: the worker's outcome and the supervisor's cause.
    pub(super) fn into_ending(self) -> (Option<Outcome>, Option<StopCause>) {
        match self {
            Self::AwaitingHello | Self::Running => (None, None),
            Self::Reported { outcome, .. } => (Some(outcome), None),
            Self::Stopping { cause, outcome, .. } => (outcome, Some(cause)),
        }
    }
}

#[cfg(test)]
#[path = "phase_tests.rs"]
mod tests;
