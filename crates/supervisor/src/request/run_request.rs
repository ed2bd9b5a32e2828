//! What a caller asks the supervisor to run, fully resolved: agent, task,
//! provider, budgets and limits. The CLI and the library build these.
//! The run id each run (and each parallel call) is known by is made here too,
//! beside the request it names.

use std::ffi::OsString;
use std::path::PathBuf;

use subagent_protocol::session::BatchTask;
use subagent_protocol::{
    Budget, HistoryMessage, Limits, OutputMode, ProviderSpec, RunMode, WebSettings,
};

/// How to start a worker process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerCommand {
    /// The worker binary.
    pub program: PathBuf,
    /// Its arguments (the real worker takes none; test fixtures take a mode).
    pub args: Vec<OsString>,
}

impl WorkerCommand {
    /// The `subagent-worker` binary next to the current executable, or
    /// `$SUBAGENT_WORKER` when set.
    pub fn default_for_current_exe() -> Option<Self> {
        let program = match std::env::var_os("SUBAGENT_WORKER").filter(|v| !v.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => std::env::current_exe()
                .ok()?
                .parent()?
                .join("subagent-worker"),
        };
        Some(Self {
            program,
            args: Vec::new(),
        })
    }
}

/// One subagent run, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRequest {
    /// Agent name (must be in the supervisor's catalog).
    pub agent: String,
    /// The task.
    pub task: String,
    /// System prompt override; the agent's own when `None`.
    pub system_prompt: Option<String>,
    /// Tool subset override; the agent's own when `None`.
    pub tools: Option<Vec<String>>,
    /// Model endpoint.
    pub provider: ProviderSpec,
    /// JSON Schema text for structured output.
    pub output_schema_json: Option<String>,
    /// report_back tool or native enforcement.
    pub output_mode: OutputMode,
    /// Turns and cost this child asks for.
    pub budget: Budget,
    /// What the parent has left, when the parent is itself budgeted: the
    /// child gets the smaller of the two.
    pub parent_remaining: Option<Budget>,
    /// Limits of the child.
    pub limits: Limits,
    /// Directory the child works in.
    pub workspace_dir: PathBuf,
    /// Tool processes may use the network (off by default).
    pub allow_network: bool,
    /// Depth of the CALLER (0 for a top-level parent); the child runs at depth + 1.
    pub caller_depth: u32,
    /// Deepest depth a child may run at (default 1: children of the top level only).
    pub max_depth: u32,
    /// The caller's session file, to receive lifecycle lines.
    pub parent_session: Option<PathBuf>,
    /// single, parallel or chain (for lifecycle lines).
    pub mode: RunMode,
    /// Settings of the web tools (search backend, private networks).
    pub web: WebSettings,
    /// The recorded run this one continues, when it is a resume.
    pub resume: Option<ResumeFrom>,
    /// The batch task this run is, for its session header.
    pub batch_task: Option<BatchTask>,
    /// How its tools see the workspace: through a copy-on-write layer of
    /// the run's own (the default) or in place.
    pub isolation: crate::layer::WorkspaceIsolation,
    /// When a layered run's changes are applied to the workspace.
    pub apply: crate::layer::ApplyMode,
    /// The parent's copy-on-write view, for a nested run of a layered
    /// parent: it works on what the parent sees, and its changes go there.
    pub parent_view: Option<crate::layer::ParentView>,
    /// The span its trace spans are children of (the caller's W3C trace
    /// context, a nested run's parent tool call, a batch); the process's
    /// `TRACEPARENT` when `None`.
    pub trace_parent: Option<crate::telemetry::TraceParent>,
}

/// A recorded conversation a run continues (built by [`crate::resume`]
/// from the session file of the run it continues).
#[derive(Debug, Clone, PartialEq)]
pub struct ResumeFrom {
    /// The recorded run's id.
    pub run_id: String,
    /// Its session file.
    pub file: PathBuf,
    /// The conversation, oldest first; the run's task follows it.
    pub history: Vec<HistoryMessage>,
    /// Complete model turns in `history`.
    pub turns: u32,
}

impl RunRequest {
    /// The budget the child actually gets.
    pub fn effective_budget(&self) -> Budget {
        match self.parent_remaining {
            Some(parent) => self.budget.capped_by(parent),
            None => self.budget,
        }
    }

    /// A request with default budgets and limits.
    pub fn new(agent: impl Into<String>, task: impl Into<String>, provider: ProviderSpec) -> Self {
        Self {
            agent: agent.into(),
            task: task.into(),
            system_prompt: None,
            tools: None,
            provider,
            output_schema_json: None,
            output_mode: OutputMode::ReportBack,
            budget: Budget::default(),
            parent_remaining: None,
            limits: Limits::default(),
            workspace_dir: PathBuf::from("."),
            allow_network: false,
            caller_depth: 0,
            max_depth: crate::config::DEFAULT_MAX_DEPTH,
            parent_session: None,
            mode: RunMode::Single,
            web: WebSettings::default(),
            resume: None,
            batch_task: None,
            isolation: crate::layer::WorkspaceIsolation::default(),
            apply: crate::layer::ApplyMode::default(),
            parent_view: None,
            trace_parent: None,
        }
    }
}

/// A fresh run id (a UUIDv7 in 32 hex digits: see [`crate::session::run_ids`]).
pub(crate) fn new_run_id() -> String {
    crate::session::run_ids::new_run_id()
}
