//! The supervisor: admits or refuses a run (input, agent, tool subset,
//! depth, spawn gate, spawn cap, concurrency), then hands it to
//! [`super::child`] and assembles the result. Every refusal happens before
//! any process starts and comes back as a result object with the matching
//! error code, never as a panic or a Rust error: the parent always gets the
//! documented shape.
//!
//! Nested subagents (a worker's `subagent` tool) come in through
//! [`Supervisor::run_nested`] and pass the same admission. They do not take
//! one of the `max_concurrent` slots: their parent holds one while it waits
//! for them, so sharing the slots would let a full supervisor refuse every
//! grandchild (or, were slots waited for, deadlock). They take one of as
//! many nested slots instead, never waited for either, and count against
//! their tree's spawn cap.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use subagent_protocol::ErrorCode;
use subagent_protocol::result::SubagentResult;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::config::SupervisorConfig;
use super::nested::SpawnTree;
use super::request::RunRequest;
use super::tool_subset::{SubsetOrigin, check_tool_subset};

/// The embedding program's answer to "may this child start?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateDecision {
    /// Go ahead.
    Allow,
    /// Refuse, with a reason the parent model will read.
    Deny(String),
}

/// A hook consulted before any process starts (a budget or policy check).
pub trait SpawnGate: Send + Sync {
    /// Decides for one request.
    fn check(&self, request: &RunRequest) -> GateDecision;
}

/// Runs subagents under one set of limits.
pub struct Supervisor {
    pub(super) config: SupervisorConfig,
    slots: Arc<Semaphore>,
    /// Nested subagents running at once, as many as `slots`.
    nested_slots: Arc<Semaphore>,
    gate: Option<Arc<dyn SpawnGate>>,
    spawned: AtomicU32,
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
        let slots = Arc::new(Semaphore::new(config.max_concurrent));
        let nested_slots = Arc::new(Semaphore::new(config.max_concurrent));
        Self {
            config,
            slots,
            nested_slots,
            gate: None,
            spawned: AtomicU32::new(0),
        }
    }

    /// Installs the spawn gate.
    pub fn with_gate(mut self, gate: Arc<dyn SpawnGate>) -> Self {
        self.gate = Some(gate);
        self
    }

    /// Children running now.
    pub fn running(&self) -> usize {
        self.config.max_concurrent - self.slots.available_permits()
    }

    /// Runs one subagent to completion (or refusal) and returns the result
    /// object. `cancel` aborts it: Cancel frame, then the group is killed.
    pub async fn run(&self, request: RunRequest, cancel: CancellationToken) -> SubagentResult {
        self.run_in_tree(request, cancel, None).await
    }

    /// Runs a nested subagent of the tree `tree` (see the module doc for
    /// its slots); called from its parent's watch, which drives it.
    pub(super) async fn run_nested(
        &self,
        request: RunRequest,
        cancel: CancellationToken,
        tree: Arc<SpawnTree>,
    ) -> SubagentResult {
        self.run_in_tree(request, cancel, Some(tree)).await
    }

    /// A root run (`tree: None`, it starts a tree of its own) or a nested
    /// one: admission, a slot, the spawn caps, then the child.
    async fn run_in_tree(
        &self,
        request: RunRequest,
        cancel: CancellationToken,
        tree: Option<Arc<SpawnTree>>,
    ) -> SubagentResult {
        let agent = match self.admit(&request) {
            Ok(agent) => agent,
            Err(refusal) => {
                let code = refusal.details.error.as_ref().map(|e| e.code);
                tracing::info!(
                    agent = %request.agent,
                    ?code,
                    "run refused before any process started"
                );
                return *refusal;
            }
        };
        // Concurrency: refuse rather than queue; batch callers queue themselves.
        let slots = match &tree {
            Some(_) => &self.nested_slots,
            None => &self.slots,
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            if tree.is_some() {
                return SubagentResult::refusal(
                    ErrorCode::SubagentSpawnDenied,
                    format!(
                        "{} nested subagents are running and the limit is {}; wait for one to finish or do the work directly",
                        self.config.max_concurrent - self.nested_slots.available_permits(),
                        self.config.max_concurrent
                    ),
                );
            }
            tracing::info!(
                agent = %request.agent,
                running = self.running(),
                "run refused: the concurrency limit is reached"
            );
            return SubagentResult::refusal(
                ErrorCode::InvalidInput,
                format!(
                    "{} subagents are running and the limit is {}; wait for one to finish or raise max_concurrent",
                    self.running(),
                    self.config.max_concurrent
                ),
            );
        };
        if let Some(max) = self.config.max_spawns {
            let prior = self.spawned.fetch_add(1, Ordering::SeqCst);
            if prior >= max {
                tracing::info!(agent = %request.agent, max, "run refused: the spawn cap is reached");
                return SubagentResult::refusal(
                    ErrorCode::SubagentSpawnDenied,
                    format!(
                        "spawn cap reached: {max} subagents were already started in this run; raise max_spawns to start more"
                    ),
                );
            }
        } else {
            self.spawned.fetch_add(1, Ordering::SeqCst);
        }
        let tree = match tree {
            Some(tree) => {
                if let Err(cap) = tree.take_one() {
                    tracing::info!(agent = %request.agent, cap, "nested run refused: the tree's spawn cap is reached");
                    return SubagentResult::refusal(
                        ErrorCode::SubagentSpawnDenied,
                        format!(
                            "spawn cap reached: {cap} nested subagents were already started under this run; do the work directly"
                        ),
                    );
                }
                tree
            }
            None => SpawnTree::new(self.config.max_tree_spawns),
        };
        let result = super::child::run_child(self, request, agent, cancel, tree).await;
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

    /// Checks everything that can be checked without starting a process.
    fn admit(
        &self,
        request: &RunRequest,
    ) -> Result<crate::agents::AgentDefinition, Box<SubagentResult>> {
        let refuse = |code, message: String| Err(Box::new(SubagentResult::refusal(code, message)));
        if request.agent.trim().is_empty() {
            return refuse(
                ErrorCode::InvalidInput,
                "missing required parameter: agent".into(),
            );
        }
        // A resumed run may continue as it stood, without a new task.
        if request.task.trim().is_empty() && request.resume.is_none() {
            return refuse(
                ErrorCode::InvalidInput,
                "missing required parameter: task (the text the subagent should work on)".into(),
            );
        }
        if let Some(reason) = &self.config.subagents_disabled {
            return refuse(ErrorCode::SubagentsDisabled, reason.clone());
        }
        let Some(agent) = self.config.catalog.get(&request.agent) else {
            return refuse(
                ErrorCode::UnknownAgent,
                self.config.catalog.unknown_message(&request.agent),
            );
        };
        if agent.disabled {
            return refuse(
                ErrorCode::SubagentDisabled,
                crate::agents::AgentCatalog::disabled_message(agent),
            );
        }
        // The subset the child would get is checked: the caller's when given
        // (it replaces the agent's), else the agent's own, so a bad agent
        // definition is refused here too instead of inside the worker.
        let tools_check = match &request.tools {
            Some(tools) => check_tool_subset(tools, SubsetOrigin::Requested),
            None => check_tool_subset(&agent.tools, SubsetOrigin::Agent(agent.name.clone())),
        };
        if let Err(e) = tools_check {
            return refuse(ErrorCode::InvalidInput, e.to_string());
        }
        let child_depth = request.caller_depth.saturating_add(1);
        if child_depth > request.max_depth {
            return refuse(
                ErrorCode::SubagentDepthExceeded,
                format!(
                    "subagent depth limit reached: a child would run at depth {child_depth}, the limit is {}; do the work directly instead of delegating",
                    request.max_depth
                ),
            );
        }
        if let Some(schema) = &request.output_schema_json
            && let Err(e) = subagent_report_back::ReportBackSchema::compile(schema)
        {
            return refuse(
                ErrorCode::InvalidInput,
                format!("invalid output schema: {e}"),
            );
        }
        if let Some(gate) = &self.gate
            && let GateDecision::Deny(reason) = gate.check(request)
        {
            return refuse(
                ErrorCode::SubagentSpawnDenied,
                format!("spawn refused: {reason}"),
            );
        }
        Ok(agent.clone())
    }
}
