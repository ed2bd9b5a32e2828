//! A call's plan ([`RunPlan`]: its [`RunMode`], its resolved requests and,
//! for `parallel`, how many run at once) and the one dispatcher on it,
//! [`Supervisor::execute`]: every way in that runs more than a single
//! request (`subagent run`, both servers, background jobs) goes through it,
//! so a mode means the same thing everywhere.
//!
//! In: resolved [`RunRequest`]s. Out: one result object. It never starts a
//! process itself: the modes are composed from [`Supervisor::run`].

use subagent_protocol::ErrorCode;
use subagent_protocol::RunMode;
use subagent_protocol::result::SubagentResult;
use tokio_util::sync::CancellationToken;

use super::supervisor::Supervisor;
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
    /// ([`Supervisor::run_parallel`]).
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

impl Supervisor {
    /// Runs the plan: one child, a batch ([`Self::run_batch`], or
    /// [`Self::run_parallel`] without a concurrency) or a chain
    /// ([`Self::run_chain`]). A plan without a request is refused
    /// (INVALID_INPUT) before anything starts.
    pub async fn execute(&self, plan: RunPlan, cancel: CancellationToken) -> SubagentResult {
        let RunPlan {
            mode,
            requests,
            concurrency,
        } = plan;
        match mode {
            RunMode::Single => match requests.into_iter().next() {
                Some(request) => self.run(request, cancel).await,
                None => SubagentResult::refusal(ErrorCode::InvalidInput, "no task".to_owned()),
            },
            RunMode::Parallel => match concurrency {
                Some(concurrency) => self.run_batch(requests, concurrency, cancel).await,
                None => self.run_parallel(requests, cancel).await,
            },
            RunMode::Chain => self.run_chain(requests, cancel).await,
        }
    }
}
