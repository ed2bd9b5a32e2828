//! The supervisor: the way in for a run. [`crate::run::admit::admission`] admits or
//! refuses it (a root run over the concurrency limit waits there for a
//! slot), [`crate::run::child::life`] runs it and returns the assembled result.
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

use futures_util::StreamExt;
use subagent_protocol::result::SubagentResult;
use subagent_protocol::{ErrorCode, RunMode};
use tokio_util::sync::CancellationToken;

use crate::live::LiveRun;
use crate::request::{RunRequest, new_run_id};
use crate::run::admit::admission::{
    Admission, Admitted, NotAdmitted, QueueStep, SpawnGate, SpawnTree,
};
use crate::run::child::life::{Begin, ToRun, run_child};
use crate::run::child::nested::NestedRunner;
use crate::run::config::SupervisorConfig;
use crate::run::modes::{
    check_concurrency, combine_batch, combine_chain, output_text, substitute_previous,
};
use crate::run::plan::RunPlan;
use crate::run::progress::events::ProgressEvent;

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
    /// ([`subagent_redact::warm_up`]). The Python interpreter is not asked
    /// here: only when a model first calls `python_execute` (`run::python`).
    pub fn new(config: SupervisorConfig) -> Self {
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
    ///
    /// When `max_concurrent` runs already hold a slot, it waits for one
    /// (first come, first served) before anything of it starts; a cancel
    /// while it waits ends it `SUBAGENT_CANCELLED` without a worker, with a
    /// session file that says so. Its wall timeout counts from its start,
    /// not from its wait.
    pub fn run(
        &self,
        request: RunRequest,
        cancel: CancellationToken,
    ) -> impl Future<Output = SubagentResult> + Send + '_ {
        // Not an async fn: one would keep its own copy of the request in
        // every live run's future, beside the boxed one below.
        self.run_in_tree(Box::new(request), cancel, None)
    }

    /// The most root runs that hold a slot at once (`max_concurrent`).
    pub fn max_concurrent(&self) -> usize {
        self.config.max_concurrent
    }

    /// Root runs waiting for a slot now (see [`Self::run`]).
    pub fn queued(&self) -> usize {
        self.admission.queued()
    }

    /// A root run (`tree: None`, it starts a tree of its own) or a nested
    /// one: admission (a root run over `max_concurrent` waits there for a
    /// slot, reported as [`ProgressEvent::Queued`]), then the child.
    async fn run_in_tree(
        &self,
        mut request: Box<RunRequest>,
        cancel: CancellationToken,
        tree: Option<Arc<SpawnTree>>,
    ) -> SubagentResult {
        let run_id = new_run_id();
        // Made here only if the run queues (else beside its session file):
        // a refused run leaves nothing behind, not even a sessions dir.
        let mut live: Option<LiveRun> = None;
        let on_queue = |step: QueueStep| {
            live.get_or_insert_with(|| self.live_record(&run_id, &request))
                .queued(matches!(step, QueueStep::Waiting { .. }));
            self.queue_progress(&run_id, &request.agent, step);
        };
        let admitted =
            Box::pin(
                self.admission
                    .admit(&self.config, &request, tree, &cancel, on_queue),
            )
            .await;
        let (agent, workspace, permit, tree, begin) = match admitted {
            Ok(Admitted {
                agent,
                workspace,
                permit,
                tree,
            }) => (agent, Some(workspace), Some(permit), tree, Begin::Spawn),
            Err(NotAdmitted::Refused(refusal)) => return refusal.into_result(),
            Err(NotAdmitted::CancelledInQueue { agent, limit }) => (
                *agent,
                None,
                None,
                SpawnTree::new(self.config.max_tree_spawns),
                Begin::CancelledInQueue { limit },
            ),
        };
        // The run goes by the admitted directory from here on: its
        // canonical path (a relative or symlinked one is resolved once).
        if let Some(workspace) = &workspace {
            request.workspace_dir.clone_from(&workspace.path);
        }
        let run = ToRun {
            request,
            agent,
            workspace,
            run_id,
            begin,
            live,
        };
        let result = run_child(&self.config, self, run, cancel, tree).await;
        drop(permit);
        result
    }

    /// The live record of run `run_id`, for `subagent ps`.
    fn live_record(&self, run_id: &str, request: &RunRequest) -> LiveRun {
        LiveRun::begin(
            &self.config.sessions_dir,
            run_id,
            &request.agent,
            &request.provider.model,
            request.parent_session.as_deref(),
        )
    }

    /// Tells the progress sink, if any, that `run_id` waits for a slot or
    /// stopped waiting.
    fn queue_progress(&self, run_id: &str, agent: &str, step: QueueStep) {
        let Some(sink) = &self.config.progress else {
            return;
        };
        let run_id = run_id.to_owned();
        sink.emit(&match step {
            QueueStep::Waiting { running, limit } => ProgressEvent::Queued {
                run_id,
                agent: agent.to_owned(),
                running,
                limit,
            },
            QueueStep::Left { admitted } => ProgressEvent::LeftQueue { run_id, admitted },
        });
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

    // The modes: one dispatcher on a plan, and the two ways one call runs
    // several children, composed from `run` (pure pieces in `modes.rs`).

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

    /// Runs every request (mode `parallel`) with at most `concurrency`
    /// children at once; the rest wait for a free slot (and for one of the
    /// supervisor's, when other calls hold them: see [`Supervisor::run`]).
    /// `results` are in request order and `content` is one summary for the
    /// parent.
    ///
    /// A `concurrency` of 0 or above the supervisor's `max_concurrent`, or an
    /// empty list, is refused (INVALID_INPUT) before anything starts.
    pub async fn run_batch(
        &self,
        requests: Vec<RunRequest>,
        concurrency: usize,
        cancel: CancellationToken,
    ) -> SubagentResult {
        if requests.is_empty() {
            return SubagentResult::refusal(
                ErrorCode::InvalidInput,
                "a parallel call needs at least one task".to_owned(),
            );
        }
        if let Err(message) = check_concurrency(concurrency, self.config.max_concurrent) {
            return SubagentResult::refusal(ErrorCode::InvalidInput, message);
        }
        let tasks: Vec<String> = requests.iter().map(|r| r.task.clone()).collect();
        // `buffered` keeps at most `concurrency` runs in flight and yields
        // them in request order, whichever finishes first.
        let children: Vec<SubagentResult> = futures_util::stream::iter(requests)
            .map(|mut request| {
                request.mode = RunMode::Parallel;
                self.run(request, cancel.clone())
            })
            .buffered(concurrency)
            .collect()
            .await;
        combine_batch(&tasks, children)
    }

    /// Runs the steps one after another (mode `chain`). Each step's task has
    /// [`PREVIOUS_PLACEHOLDER`](crate::run::PREVIOUS_PLACEHOLDER) replaced by the previous step's output (the
    /// first step's is left as written). The chain stops at the first failing
    /// step: its error is the call's error and later steps never start.
    /// `content` is the last step's output.
    pub async fn run_chain(
        &self,
        steps: Vec<RunRequest>,
        cancel: CancellationToken,
    ) -> SubagentResult {
        if steps.is_empty() {
            return SubagentResult::refusal(
                ErrorCode::InvalidInput,
                "a chain needs at least one step".to_owned(),
            );
        }
        let total = steps.len();
        let mut ran = Vec::with_capacity(total);
        let mut previous: Option<String> = None;
        for mut step in steps {
            if let Some(previous) = &previous {
                step.task = substitute_previous(&step.task, previous);
            }
            step.mode = RunMode::Chain;
            let result = self.run(step, cancel.clone()).await;
            let failed = result.details.error.is_some();
            previous = Some(output_text(&result));
            ran.push(result);
            if failed {
                break;
            }
        }
        combine_chain(total, ran)
    }
}

impl NestedRunner for Supervisor {
    /// Runs a nested subagent of the tree `tree` (see
    /// [`crate::run::admit::admission`] for its slots); called from its parent's
    /// watch, which drives it.
    fn run_nested(
        &self,
        request: RunRequest,
        cancel: CancellationToken,
        tree: Arc<SpawnTree>,
    ) -> Pin<Box<dyn Future<Output = SubagentResult> + Send + '_>> {
        Box::pin(self.run_in_tree(Box::new(request), cancel, Some(tree)))
    }
}
