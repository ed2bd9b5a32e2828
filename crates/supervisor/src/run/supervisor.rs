//! The supervisor: the way in for a run. [`super::admission`] admits or
//! refuses it, [`super::child`] runs it and returns the assembled result.
//! Every refusal happens before any process starts and comes back as a
//! result object with the matching error code, never as a panic or a Rust
//! error: the parent always gets the documented shape.
//!
//! Nested subagents (a worker's `subagent` tool) come back in through
//! [`NestedRunner`], which the run's context holds instead of the
//! supervisor itself, and pass the same admission.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use subagent_protocol::ErrorCode;
use subagent_protocol::result::SubagentResult;
use tokio_util::sync::CancellationToken;

use super::admission::{Admission, Admitted, SpawnGate, SpawnTree};
use super::config::SupervisorConfig;
use super::nested::NestedRunner;
use super::request::RunRequest;

/// Runs subagents under one set of limits.
pub struct Supervisor {
    pub(super) config: SupervisorConfig,
    admission: Admission,
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor")
            .field("config", &self.config)
            .field("running", &self.running())
            .finish_non_exhaustive()
    }
}

impl Supervisor {
    /// A supervisor with no spawn gate. Starts three costs of the first run
    /// in the background, so the run does not wait for them: the kernel's
    /// first cgroup-migration wait ([`subagent_sandbox::prewarm_attach`]),
    /// the tool-sandbox probe the session header's forecast needs
    /// ([`subagent_sandbox::prewarm_isolation_support`]), and compiling the
    /// secret patterns every recorded task is masked with
    /// ([`subagent_redact::warm_up`]); and resolving the Python
    /// interpreter once ([`super::python::prewarm`]).
    pub fn new(config: SupervisorConfig) -> Self {
        super::python::prewarm();
        subagent_sandbox::prewarm_attach();
        subagent_sandbox::prewarm_isolation_support();
        subagent_redact::warm_up();
        let admission = Admission::new(config.max_concurrent);
        Self { config, admission }
    }

    /// Installs the spawn gate.
    pub fn with_gate(mut self, gate: Arc<dyn SpawnGate>) -> Self {
        self.admission.gate = Some(gate);
        self
    }

    /// Children running now.
    pub fn running(&self) -> usize {
        self.admission.running()
    }

    /// Runs one subagent to completion (or refusal) and returns the result
    /// object. `cancel` aborts it: Cancel frame, then the group is killed.
    pub async fn run(&self, request: RunRequest, cancel: CancellationToken) -> SubagentResult {
        self.run_in_tree(request, cancel, None).await
    }

    /// A root run (`tree: None`, it starts a tree of its own) or a nested
    /// one: admission, then the child.
    async fn run_in_tree(
        &self,
        request: RunRequest,
        cancel: CancellationToken,
        tree: Option<Arc<SpawnTree>>,
    ) -> SubagentResult {
        let Admitted {
            agent,
            permit,
            tree,
        } = match self.admission.admit(&self.config, &request, tree) {
            Ok(admitted) => admitted,
            Err(refusal) => return refusal.into_result(),
        };
        let result =
            super::child::run_child(&self.config, self, request, agent, cancel, tree).await;
        drop(permit);
        result
    }

    /// Runs several subagents at once (mode `parallel`), all of them at the
    /// same time, and returns one result object with a `results` entry per
    /// child that ran ([`Self::run_batch`] with every task in flight). A call
    /// with more than `max_per_call` requests is refused before anything
    /// starts.
    pub async fn run_parallel(
        &self,
        requests: Vec<RunRequest>,
        cancel: CancellationToken,
    ) -> SubagentResult {
        if requests.len() > self.config.max_per_call {
            return SubagentResult::refusal(
                ErrorCode::InvalidInput,
                format!(
                    "{} tasks were requested in one call and the limit is {} per call; split them into several calls",
                    requests.len(),
                    self.config.max_per_call
                ),
            );
        }
        let all_at_once = requests.len().clamp(1, self.config.max_concurrent.max(1));
        self.run_batch(requests, all_at_once, cancel).await
    }
}

impl NestedRunner for Supervisor {
    /// Runs a nested subagent of the tree `tree` (see
    /// [`super::admission`] for its slots); called from its parent's
    /// watch, which drives it.
    fn run_nested(
        &self,
        request: RunRequest,
        cancel: CancellationToken,
        tree: Arc<SpawnTree>,
    ) -> Pin<Box<dyn Future<Output = SubagentResult> + Send + '_>> {
        Box::pin(self.run_in_tree(request, cancel, Some(tree)))
    }
}
