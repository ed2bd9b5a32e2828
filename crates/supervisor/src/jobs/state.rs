//! Where a job is ([`JobState`]): waiting for a concurrency slot, running,
//! or over (and how), as `status`, `list` and progress report it.
//!
//! Pure: the state of a live job follows from its progress so far
//! ([`Streaming::is_queued`]), the state of an ended one from its ending
//! lifecycle line. Nothing here starts, stops or writes anything.

use serde::Serialize;
use subagent_protocol::session::{LifecycleStatus, SessionEntry, SessionLine};

use super::streaming::Streaming;

/// Where a job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    /// Waiting for one of the supervisor's `max_concurrent` slots: every
    /// one is taken and none of its runs has started.
    Queued,
    /// Running (a parallel job whose other runs still wait is running).
    Running,
    /// Ended with `subagent:complete`.
    Completed,
    /// Ended with `subagent:error`.
    Failed,
    /// Cancelled (`subagent:aborted`).
    Aborted,
    /// Left without an ending by a server that died; marked by the next.
    Interrupted,
}

impl JobState {
    /// True while the job has not ended: it can be cancelled and waited for.
    pub fn is_live(self) -> bool {
        matches!(self, Self::Queued | Self::Running)
    }

    /// The state of a live job whose progress so far is `streaming`.
    pub(super) fn live(streaming: &Streaming) -> Self {
        if streaming.is_queued() {
            Self::Queued
        } else {
            Self::Running
        }
    }

    /// The state an ending line stands for.
    pub(super) fn of_ending(line: &SessionLine) -> Self {
        match &line.entry {
            SessionEntry::AgentEvent(e) => match e.status {
                Some(LifecycleStatus::Completed) => Self::Completed,
                Some(LifecycleStatus::Failed) => Self::Failed,
                Some(LifecycleStatus::Aborted) => Self::Aborted,
                None => Self::Running,
            },
            _ => Self::Running,
        }
    }
}
