//! The [`Tool`] trait and what a call receives and returns.
//!
//! A tool is cancel-safe by drop: the worker races every call against its
//! cancellation and its timeout and simply drops the future. A tool that
//! starts a process must therefore tie the process's life to the future (kill
//! on drop), never leave it running detached.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use subagent_protocol::{Limits, PythonInterpreter, WebSettings};
use subagent_sandbox::Interpreter;

use crate::disk::WorkspaceGrowth;
use crate::network::RunNetwork;
use crate::pin::WorkspacePin;
use crate::web::WebContext;

/// The future a [`Tool::call`] returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'a>>;

/// One tool a model may call.
pub trait Tool: Send + Sync {
    /// The name the model calls it by (`[a-z0-9_]+`, unique in a registry).
    fn name(&self) -> &str;

    /// What it does, written for the model.
    fn description(&self) -> &str;

    /// JSON Schema of its arguments: an object schema.
    fn parameters(&self) -> serde_json::Value;

    /// Runs one call with already-parsed arguments (a JSON object).
    ///
    /// The caller enforces `ctx.timeout` and caps the output again; a tool
    /// that spawns processes should still honour both itself so it stops
    /// early instead of producing output nobody will see.
    fn call<'a>(&'a self, arguments: serde_json::Value, ctx: &'a ToolContext) -> ToolFuture<'a>;

    /// How long [`crate::run_tool`] lets a call run before dropping it.
    /// A tool that enforces a per-call timeout of its own (and reports how
    /// its process ended) returns a longer bound so its own report wins.
    fn deadline(&self, ctx: &ToolContext) -> Duration {
        ctx.timeout
    }
}

/// Caps on the output shown to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputCaps {
    /// Bytes kept (head + tail), before the omission marker.
    pub max_bytes: usize,
    /// Lines kept (head + tail), before the omission marker.
    pub max_lines: usize,
}

/// Where and under which limits a call runs.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The directory tools are confined to.
    pub workspace_dir: PathBuf,
    /// Wall-clock limit of one call that asks for none.
    pub timeout: Duration,
    /// Longest wall-clock limit a call may ask for.
    pub max_timeout: Duration,
    /// Caps on the output shown to the model.
    pub output_caps: OutputCaps,
    /// Limits and sandbox policy of tool processes.
    pub process: ProcessPolicy,
    /// How much this run's process tools may still grow the workspace;
    /// shared by every call of the run (clones share it).
    pub disk: WorkspaceGrowth,
    /// Search backend and address policy of the web tools.
    pub web: WebContext,
    /// The interpreter of `python_execute`, as the supervisor resolved it;
    /// `None` in a context made without a task (tests, embedders): then
    /// this process resolves it once itself, from `/` as well.
    pub python: Option<PythonInterpreter>,
    /// Where the interpreter arrives when `python` is
    /// [`PythonInterpreter::Pending`]: the supervisor sends it after the
    /// task, and `python_execute` waits for it.
    pub python_later: Option<PythonLater>,
    /// Paths inside the workspace that process tools get read-only (the
    /// supervisor's `TaskSpec::protected_paths`).
    pub protected: Vec<PathBuf>,
    /// The workspace directory the run was started in; `None` in a context
    /// made without a run (tests, embedders), which goes by the path.
    pub workspace_pin: Option<WorkspacePin>,
    /// The run's id, in the names of what a call's check sets aside.
    pub run_id: String,
    /// What calls want said in the run's record besides their output
    /// (a quarantined `.git`); the caller takes them after each call.
    pub notices: Notices,
    /// The private network process tools get when `process.allow_network`
    /// is on, started by the first call that needs it.
    pub network: RunNetwork,
}

/// Lines for the run's record, shared by the clones of one context.
#[derive(Debug, Clone, Default)]
pub struct Notices(Arc<Mutex<Vec<String>>>);

impl Notices {
    /// Adds `lines`.
    pub fn extend(&self, lines: impl IntoIterator<Item = String>) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(lines);
    }

    /// Takes every line added so far.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl ToolContext {
    /// A context for `workspace_dir` with the default limits of
    /// [`Limits::default`] and the network off.
    pub fn new(workspace_dir: impl Into<PathBuf>) -> Self {
        Self::from_limits(workspace_dir, &Limits::default(), false, false)
    }

    /// A context for `workspace_dir` under `limits`.
    pub fn from_limits(
        workspace_dir: impl Into<PathBuf>,
        limits: &Limits,
        allow_network: bool,
        require_sandbox: bool,
    ) -> Self {
        let size = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        Self {
            workspace_dir: workspace_dir.into(),
            timeout: Duration::from_millis(limits.tool_timeout_ms),
            max_timeout: Duration::from_millis(
                limits.tool_timeout_max_ms.max(limits.tool_timeout_ms),
            ),
            output_caps: OutputCaps {
                max_bytes: size(limits.tool_output_bytes),
                max_lines: size(limits.tool_output_lines),
            },
            process: ProcessPolicy {
                memory_bytes: limits.tool_memory_bytes,
                pids: limits.tool_pids,
                allow_network,
                require_sandbox,
            },
            disk: WorkspaceGrowth::new(limits.tool_disk_bytes),
            web: WebContext::default(),
            python: None,
            python_later: None,
            protected: Vec::new(),
            workspace_pin: None,
            run_id: String::new(),
            notices: Notices::default(),
            network: RunNetwork::default(),
        }
    }

    /// This context with the run's workspace held by `pin`, for the run
    /// `run_id`.
    pub fn with_workspace_pin(mut self, pin: Option<WorkspacePin>, run_id: &str) -> Self {
        self.workspace_pin = pin;
        self.run_id = run_id.to_owned();
        self
    }

    /// This context with the web tools set up as `web` says (without it:
    /// no search backend, public addresses only).
    pub fn with_web(mut self, web: &WebSettings) -> Self {
        self.web = WebContext::from_settings(web);
        self
    }

    /// This context with the interpreter the supervisor resolved, and
    /// where it arrives when the task said it was still
    /// [`PythonInterpreter::Pending`].
    pub fn with_python(
        mut self,
        python: Option<&PythonInterpreter>,
        later: Option<PythonLater>,
    ) -> Self {
        self.python = python.cloned();
        self.python_later = later;
        self
    }

    /// This context with `paths` kept read-only for process tools.
    pub fn with_protected(mut self, paths: &[String]) -> Self {
        self.protected = paths.iter().map(PathBuf::from).collect();
        self
    }

    /// The interpreter `python_execute` runs, or why there is none.
    /// Waits for it when the supervisor sends it after the task; the wait
    /// is bounded by the call's own timeout, as the whole call is.
    pub async fn python_interpreter(&self) -> Result<Interpreter, ToolError> {
        match &self.python {
            Some(PythonInterpreter::Pending) => {
                let Some(later) = &self.python_later else {
                    return Err(not_sent());
                };
                let mut later = later.clone();
                let arrived = later
                    .wait_for(Option::is_some)
                    .await
                    .map_err(|_| not_sent())?
                    .clone();
                match arrived {
                    Some(PythonInterpreter::Pending) | None => Err(not_sent()),
                    Some(known) => interpreter_of(&known),
                }
            }
            Some(known) => interpreter_of(known),
            None => subagent_sandbox::python_interpreter()
                .await
                .cloned()
                .map_err(|e| ToolError::Failed(e.to_owned())),
        }
    }
}

/// The interpreter the supervisor sends after the task, `None` until then.
pub type PythonLater = tokio::sync::watch::Receiver<Option<PythonInterpreter>>;

fn interpreter_of(python: &PythonInterpreter) -> Result<Interpreter, ToolError> {
    match python {
        PythonInterpreter::Found {
            executable,
            prefixes,
        } => Ok(Interpreter {
            executable: executable.into(),
            prefixes: prefixes.iter().map(PathBuf::from).collect(),
        }),
        PythonInterpreter::Missing { reason } => Err(ToolError::Failed(reason.clone())),
        PythonInterpreter::Pending => Err(not_sent()),
    }
}

fn not_sent() -> ToolError {
    ToolError::Failed(
        "the supervisor never sent the Python interpreter this run was promised; run \
         `subagent doctor` to check python3, and report this as a bug"
            .to_owned(),
    )
}

/// How tool processes (python_execute and later process tools) are confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessPolicy {
    /// Memory including swap of the tool's process tree, bytes.
    pub memory_bytes: u64,
    /// Processes and threads of the tool's process tree.
    pub pids: u64,
    /// The tool process may use the network.
    pub allow_network: bool,
    /// Refuse the call when a protection cannot be applied.
    pub require_sandbox: bool,
}

/// What a successful call produced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolOutput {
    /// Text for the model (capped by the caller).
    pub text: String,
}

impl ToolOutput {
    /// An output of `text`.
    pub fn text(text: impl Into<String>) -> Self {
        Self { text: text.into() }
    }
}

/// Why a call failed. The display string is shown to the model, so it says
/// what went wrong and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The arguments did not fit the tool's parameters.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The tool ran and failed.
    #[error("{0}")]
    Failed(String),
    /// The call ran past its wall-clock limit.
    #[error("timed out after {after_ms} ms")]
    TimedOut {
        /// The limit that fired, ms.
        after_ms: u64,
    },
}
