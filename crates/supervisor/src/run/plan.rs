//! A call's plan ([`RunPlan`]: its [`RunMode`], its resolved requests and,
//! for `parallel`, how many run at once). The one dispatcher on it is
//! [`Supervisor::execute`](crate::run::Supervisor::execute), in
//! `supervisor.rs` with the rest of `impl Supervisor`: every way in that
//! runs more than a single request (`subagent run`, both servers,
//! background jobs) goes through it, so a mode means the same thing
//! everywhere.
//!
//! In: resolved [`RunRequest`]s. Out: one result object. It never starts a
//! process itself: the modes are composed from
//! [`Supervisor::run`](crate::run::Supervisor::run).

//! request (`subagent run`, both servers, background jobs) goes through it,
//! so a mode means the same thing everywhere.
//!
//! In: resolved [`RunRequest`]s. Out: one result object. It never starts a
//! process itself: the modes are composed from [`Supervisor::run`](crate::run::Supervisor::run).

use subagent_protocol::RunMode;

use crate::request::RunRequest;

/// What one call runs, and how.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// Single, parallel or chain.
    pub mode: RunMode,
    /// The requests, in task order (exactly one for `single`; a longer
    /// list runs its first).
    pub requests: Vec<RunRequest>,
    /// `parallel` only: children running at once. `None` runs every
    /// request at once, up to the supervisor's `max_concurrent`
    /// ([`Supervisor::run_parallel`](crate::run::Supervisor::run_parallel)).
    pub concurrency: Option<usize>,
}

impl RunPlan {
    /// A plan of `requests` run as `mode`, every parallel one at once.
    pub fn new(mode: RunMode, requests: Vec<RunRequest>) -> Self {
        Self {
            mode,
            requests,
            concurrency: None,
        }
    }

    /// One request per task, each `template` with its own task.
    pub fn for_tasks(
        mode: RunMode,
        template: &RunRequest,
        tasks: impl IntoIterator<Item = String>,
    ) -> Self {
        let requests = tasks
            .into_iter()
            .map(|task| RunRequest {
                task,
                ..template.clone()
            })
            .collect();
        Self::new(mode, requests)
    }

    /// The same plan with at most `concurrency` parallel children at once.
    pub fn with_concurrency(mut self, concurrency: Option<usize>) -> Self {
        self.concurrency = concurrency;
        self
    }
}
