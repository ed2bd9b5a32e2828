//! Admission: whether a run may start, decided before any process or file
//! exists. The only place that checks the request's input, its agent and
//! tool subset, its workspace ([`crate::run::admit::workspace`]: decided here, once,
//! and refused when it holds what the supervisor reads back), the depth
//! limit, the spawn gate, the concurrency slots, the supervisor's spawn
//! cap, the tree's spawn cap, and a nested spawn's budget.
//!
//! A root run over the `max_concurrent` limit queues: [`Admission::admit`]
//! waits for a slot (first come, first served: tokio's semaphore is fair)
//! until one frees or the run's cancel token fires. Every way in (`run`,
//! `--parallel`, `--chain`, `batch`, both servers, background jobs) goes
//! through here, so they all share that rule.
//!
//! Nested subagents do not take one of the `max_concurrent` slots: their
//! parent holds one while it waits for them, so sharing the slots would let
//! a full supervisor refuse every grandchild (or, were slots waited for,
//! deadlock). They take one of as many nested slots instead, never waited
//! for (a parent waiting on a slot that its own siblings' children hold
//! could deadlock the same way): a nested spawn over that limit is refused
//! at once, and counts against its tree's spawn cap.
//!
//! It decides and counts; it never starts, writes or kills anything. A
//! refusal is a [`Refusal`] (code and message), which callers turn into
//! the documented result object; a run cancelled while it waited is
//! [`NotAdmitted::CancelledInQueue`], which the caller records as a
//! cancelled run that never started.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use subagent_protocol::result::SubagentResult;
use subagent_protocol::{Budget, ErrorCode, Usage};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::agents::{AgentCatalog, AgentDefinition};
use crate::config::HostFiles;
use crate::request::RunRequest;
use crate::run::admit::reservation::{Asked, BudgetShare, ReservationId};
use crate::run::admit::tool_subset::{SubsetOrigin, check_tool_subset};
use crate::run::admit::workspace::{self, AdmittedWorkspace};
use crate::run::config::SupervisorConfig;

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

/// Why a run may not start: the result's error code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::run) struct Refusal {
    pub code: ErrorCode,
    pub message: String,
}

impl Refusal {
    fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// The refusal as the result object a caller gets.
    pub(in crate::run) fn into_result(self) -> SubagentResult {
        SubagentResult::refusal(self.code, self.message)
    }
}

/// Why a run did not start.
#[derive(Debug)]
pub(in crate::run) enum NotAdmitted {
    /// Refused: the request, a cap or the gate said no.
    Refused(Refusal),
    /// Its cancel token fired while it waited for a slot; nothing started.
    /// `agent` is the definition it was admitted with so far.
    CancelledInQueue {
        agent: Box<AgentDefinition>,
        limit: usize,
    },
}

impl From<Refusal> for NotAdmitted {
    fn from(refusal: Refusal) -> Self {
        Self::Refused(refusal)
    }
}

/// What a root run's wait for a slot is doing, for the caller's progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::run) enum QueueStep {
    /// Every slot is taken: the run waits. `running` root runs hold the
    /// `limit` slots.
    Waiting { running: usize, limit: usize },
    /// It waited and no longer does: it has its slot (`admitted`) or was
    /// cancelled.
    Left { admitted: bool },
}

/// What an admitted run holds while it runs: its agent, its slot (given
/// back on drop) and the spawn tree its nested subagents count against.
#[derive(Debug)]
pub(in crate::run) struct Admitted {
    pub agent: AgentDefinition,
    pub workspace: AdmittedWorkspace,
    pub permit: OwnedSemaphorePermit,
    pub tree: Arc<SpawnTree>,
}

/// What one root run's tree has started so far (at most
/// [`SupervisorConfig::max_tree_spawns`]); shared by every run in it.
#[derive(Debug)]
pub(in crate::run) struct SpawnTree {
    spawned: AtomicU32,
    cap: u32,
}

impl SpawnTree {
    pub(in crate::run) fn new(cap: u32) -> Arc<Self> {
        Arc::new(Self {
            spawned: AtomicU32::new(0),
            cap,
        })
    }

    /// Counts one more nested spawn; `Err(cap)` when the cap is reached.
    pub(in crate::run) fn take_one(&self) -> Result<(), u32> {
        let prior = self.spawned.fetch_add(1, Ordering::SeqCst);
        if prior >= self.cap {
            self.spawned.fetch_sub(1, Ordering::SeqCst);
            return Err(self.cap);
        }
        Ok(())
    }
}

/// The supervisor's counters: slots for root and nested runs, the runs
/// started so far, and the embedding program's gate.
pub(in crate::run) struct Admission {
    max_concurrent: usize,
    slots: Arc<Semaphore>,
    /// Nested subagents running at once, as many as `slots`.
    nested_slots: Arc<Semaphore>,
    spawned: AtomicU32,
    /// Root runs waiting for a slot.
    queued: AtomicUsize,
    pub(in crate::run) gate: Option<Arc<dyn SpawnGate>>,
}

impl Admission {
    pub(in crate::run) fn new(max_concurrent: usize) -> Self {
        Self {
            max_concurrent,
            slots: Arc::new(Semaphore::new(max_concurrent)),
            nested_slots: Arc::new(Semaphore::new(max_concurrent)),
            spawned: AtomicU32::new(0),
            queued: AtomicUsize::new(0),
            gate: None,
        }
    }

    /// Root runs holding a slot now.
    pub(in crate::run) fn running(&self) -> usize {
        self.max_concurrent - self.slots.available_permits()
    }

    /// Root runs waiting for a slot now.
    pub(in crate::run) fn queued(&self) -> usize {
        self.queued.load(Ordering::SeqCst)
    }

    /// Admits a root run (`tree: None`, it starts a tree of its own) or a
    /// nested one of `tree`: the request, then a slot, then the spawn caps.
    /// A root run waits for its slot when all are taken (telling
    /// `on_queue` when it starts and stops waiting) until `cancel` fires;
    /// a nested one is refused instead (see the module doc).
    pub(in crate::run) async fn admit(
        &self,
        config: &SupervisorConfig,
        request: &RunRequest,
        tree: Option<Arc<SpawnTree>>,
        cancel: &CancellationToken,
        on_queue: impl FnMut(QueueStep),
    ) -> Result<Admitted, NotAdmitted> {
        let (agent, workspace) = self.check_request(config, request).inspect_err(|refusal| {
            tracing::info!(
                agent = %request.agent,
                code = ?Some(refusal.code),
                "run refused before any process started"
            );
        })?;
        let permit = if tree.is_some() {
            self.take_nested_slot()?
        } else {
            match self.wait_for_slot(request, cancel, on_queue).await {
                Some(permit) => permit,
                None => {
                    return Err(NotAdmitted::CancelledInQueue {
                        agent: Box::new(agent),
                        limit: self.max_concurrent,
                    });
                }
            }
        };
        if let Some(max) = config.max_spawns {
            let prior = self.spawned.fetch_add(1, Ordering::SeqCst);
            if prior >= max {
                tracing::info!(agent = %request.agent, max, "run refused: the spawn cap is reached");
                return Err(Refusal::new(
                    ErrorCode::SubagentSpawnDenied,
                    format!(
                        "spawn cap reached: {max} subagents were already started in this run; raise max_spawns to start more"
                    ),
                )
                .into());
            }
        } else {
            self.spawned.fetch_add(1, Ordering::SeqCst);
        }
        let tree = match tree {
            Some(tree) => {
                if let Err(cap) = tree.take_one() {
                    tracing::info!(agent = %request.agent, cap, "nested run refused: the tree's spawn cap is reached");
                    return Err(Refusal::new(
                        ErrorCode::SubagentSpawnDenied,
                        format!(
                            "spawn cap reached: {cap} nested subagents were already started under this run; do the work directly"
                        ),
                    )
                    .into());
                }
                tree
            }
            None => SpawnTree::new(config.max_tree_spawns),
        };
        Ok(Admitted {
            agent,
            workspace,
            permit,
            tree,
        })
    }

    /// A root run's slot: at once when one is free, else the first to
    /// free up after the runs queued before it; `None` when `cancel` fired
    /// first. A run with a free slot starts even if its token has fired
    /// (its watch then cancels the worker, as before queueing existed).
    async fn wait_for_slot(
        &self,
        request: &RunRequest,
        cancel: &CancellationToken,
        mut on_queue: impl FnMut(QueueStep),
    ) -> Option<OwnedSemaphorePermit> {
        if let Ok(permit) = Arc::clone(&self.slots).try_acquire_owned() {
            return Some(permit);
        }
        let running = self.running();
        tracing::info!(
            agent = %request.agent,
            running,
            limit = self.max_concurrent,
            "run queued: the concurrency limit is reached; it starts when a slot frees"
        );
        self.queued.fetch_add(1, Ordering::SeqCst);
        on_queue(QueueStep::Waiting {
            running,
            limit: self.max_concurrent,
        });
        // `biased`: a cancel that arrives with a freed slot wins, so a
        // cancelled run never starts a worker.
        let permit = tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            // The semaphore is never closed, so an error cannot happen;
            // treated as no slot rather than a panic.
            permit = Arc::clone(&self.slots).acquire_owned() => permit.ok(),
        };
        self.queued.fetch_sub(1, Ordering::SeqCst);
        on_queue(QueueStep::Left {
            admitted: permit.is_some(),
        });
        permit
    }

    /// A nested run's slot, refused rather than waited for (module doc).
    fn take_nested_slot(&self) -> Result<OwnedSemaphorePermit, Refusal> {
        if let Ok(permit) = Arc::clone(&self.nested_slots).try_acquire_owned() {
            return Ok(permit);
        }
        Err(Refusal::new(
            ErrorCode::SubagentSpawnDenied,
            format!(
                "{} nested subagents are running and the limit is {}; wait for one to finish or do the work directly",
                self.max_concurrent - self.nested_slots.available_permits(),
                self.max_concurrent
            ),
        ))
    }

    /// Everything that can be checked from the request alone: its agent,
    /// and its workspace as it will be held to.
    fn check_request(
        &self,
        config: &SupervisorConfig,
        request: &RunRequest,
    ) -> Result<(AgentDefinition, AdmittedWorkspace), Refusal> {
        if request.agent.trim().is_empty() {
            return Err(Refusal::new(
                ErrorCode::InvalidInput,
                "missing required parameter: agent",
            ));
        }
        // A resumed run may continue as it stood, without a new task.
        if request.task.trim().is_empty() && request.resume.is_none() {
            return Err(Refusal::new(
                ErrorCode::InvalidInput,
                "missing required parameter: task (the text the subagent should work on)",
            ));
        }
        if let Some(reason) = &config.subagents_disabled {
            return Err(Refusal::new(ErrorCode::SubagentsDisabled, reason.clone()));
        }
        let Some(agent) = config.catalog.get(&request.agent) else {
            return Err(Refusal::new(
                ErrorCode::UnknownAgent,
                config.catalog.unknown_message(&request.agent),
            ));
        };
        if agent.disabled {
            return Err(Refusal::new(
                ErrorCode::SubagentDisabled,
                AgentCatalog::disabled_message(agent),
            ));
        }
        // The subset the child would get is checked: the caller's when given
        // (it replaces the agent's), else the agent's own, so a bad agent
        // definition is refused here too instead of inside the worker.
        let tools_check = match &request.tools {
            Some(tools) => check_tool_subset(tools, SubsetOrigin::Requested),
            None => check_tool_subset(&agent.tools, SubsetOrigin::Agent(agent.name.clone())),
        };
        if let Err(e) = tools_check {
            return Err(Refusal::new(ErrorCode::InvalidInput, e.to_string()));
        }
        // Its MCP servers, resolved now so a refusal costs no process; the
        // spec resolves them again from the same settings.
        crate::run::admit::spec::mcp_servers(config, request, agent)
            .map_err(|why| Refusal::new(ErrorCode::InvalidInput, why))?;
        check_depth(request.caller_depth, request.max_depth, "a child")?;
        if let Some(schema) = &request.output_schema_json
            && let Err(e) = subagent_report_back::ReportBackSchema::compile(schema)
        {
            return Err(Refusal::new(
                ErrorCode::InvalidInput,
                format!("invalid output schema: {e}"),
            ));
        }
        let host = HostFiles::from_env(
            std::slice::from_ref(&config.worker.program),
            &config.sessions_dir,
            &config.operator_files,
        );
        let workspace = workspace::admit(&request.workspace_dir, &host)
            .map_err(|why| Refusal::new(ErrorCode::InvalidInput, why))?;
        if let Some(gate) = &self.gate
            && let GateDecision::Deny(reason) = gate.check(request)
        {
            return Err(Refusal::new(
                ErrorCode::SubagentSpawnDenied,
                format!("spawn refused: {reason}"),
            ));
        }
        Ok((agent.clone(), workspace))
    }
}

/// The depth rule: a run started by a caller at `caller_depth` runs one
/// level deeper, and may not run deeper than `max_depth`. `who` names the
/// run in the refusal ("a child", "a subagent").
pub(in crate::run) fn check_depth(
    caller_depth: u32,
    max_depth: u32,
    who: &str,
) -> Result<(), Refusal> {
    let depth = caller_depth.saturating_add(1);
    if depth > max_depth {
        return Err(Refusal::new(
            ErrorCode::SubagentDepthExceeded,
            format!(
                "subagent depth limit reached: {who} would run at depth {depth}, the limit is \
                 {max_depth}; do the work directly instead of delegating"
            ),
        ));
    }
    Ok(())
}

/// A worker's spawn request, checked before anything starts: the depth
/// (made whatever the worker was offered: a worker at the depth limit has
/// no `subagent` tool, but a buggy or hostile one can still send the
/// request), then the budget, reserved from the parent's `share` given what
/// the parent itself has `spent`. The rest of the grandchild's admission is
/// [`Admission::admit`] when it starts.
pub(in crate::run) fn admit_spawn(
    parent: &RunRequest,
    share: &mut BudgetShare,
    spent: &Usage,
    asked: Asked,
) -> Result<(ReservationId, Budget), Refusal> {
    // The parent runs at `caller_depth + 1`; its child one deeper.
    check_depth(
        parent.caller_depth.saturating_add(1),
        parent.max_depth,
        "a subagent",
    )?;
    share.reserve(spent, asked).map_err(|why| {
        Refusal::new(
            ErrorCode::SubagentSpawnDenied,
            format!("spawn refused before it started: {why}"),
        )
    })
}

#[cfg(test)]
#[path = "admission_tests.rs"]
mod tests;
