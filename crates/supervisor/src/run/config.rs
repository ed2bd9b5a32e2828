//! How a supervisor runs children, written down once: the
//! [`SupervisorConfig`], its defaults, the timing constants of a child's
//! escalation, and which tools a child gets at its depth.
//!
//! The lowest layer of `run`: plain data and pure functions. It starts
//! nothing, writes nothing and imports no other `run` room but the request
//! and the tool-subset rules.

use std::path::PathBuf;
use std::time::Duration;

use subagent_sandbox::SandboxPolicy;

use crate::agents::AgentCatalog;
use crate::request::WorkerCommand;
use crate::run::admit::tool_subset::SUBAGENT_TOOL;
use crate::run::progress::events::{ContentSink, ProgressSink};

pub use crate::config::DEFAULT_MAX_CONCURRENT;

pub use crate::config::MAX_CONCURRENT_CEILING;

/// Subagents one parallel call may ask for, by default.
pub const DEFAULT_MAX_PER_CALL: usize = 4;

/// Nested subagents one root run may start in all, its whole tree
/// counted, by default (64): deep enough for real delegation, small enough
/// that a model spawning in a loop is stopped long before it costs much.
pub const DEFAULT_MAX_TREE_SPAWNS: u32 = 64;

/// How long a fresh worker may take to say `Hello` (10 s): a worker that
/// cannot start its runtime in that time is broken, not slow.
pub(super) const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// After `Cancel` (a caller's cancel, a wall or idle timeout), how long the
/// worker gets to send `Done` with its partial output before SIGTERM to its
/// group (2 s): cancelling aborts an HTTP request and a tool within 100 ms,
/// so this is generous. SIGKILL follows `limits.kill_grace_ms` later.
pub const CANCEL_WINDOW: Duration = Duration::from_secs(2);

/// After `Done`, how long the worker gets to exit by itself (5 s) before it is
/// terminated.
pub(super) const EXIT_AFTER_DONE: Duration = Duration::from_secs(5);

/// Bytes kept of each of stdout and stderr: head and tail (64 KiB each).
pub(super) const CAPTURE_KEEP: usize = 64 * 1024;

/// How a supervisor runs children.
#[derive(Debug, Clone)]
pub struct SupervisorConfig {
    /// The worker to start.
    pub worker: WorkerCommand,
    /// Where session files go.
    pub sessions_dir: PathBuf,
    /// Files besides the sessions dir that the supervisor writes and
    /// reads back, named by the operator (a batch's results file): when
    /// one lies in a run's workspace, tool processes get it read-only.
    pub operator_files: Vec<PathBuf>,
    /// Children running at once (default 16).
    pub max_concurrent: usize,
    /// Children one parallel call may ask for (default 4).
    pub max_per_call: usize,
    /// Children this supervisor may start in total; `None` is unlimited.
    pub max_spawns: Option<u32>,
    /// Nested subagents one root run may start, its whole tree counted
    /// (default [`DEFAULT_MAX_TREE_SPAWNS`]).
    pub max_tree_spawns: u32,
    /// Whether missing protections refuse the run.
    pub sandbox_policy: SandboxPolicy,
    /// Recorded as `requestedBy` in lifecycle lines.
    pub requested_by: String,
    /// The agents it knows.
    pub catalog: AgentCatalog,
    /// `Some(why)`: subagents are switched off (by config); every run is
    /// refused with SUBAGENTS_DISABLED and this reason.
    pub subagents_disabled: Option<String>,
    /// Told of every child's turns, tools and usage as they happen; `None`
    /// (the default) tells no one.
    pub progress: Option<ProgressSink>,
    /// Told of every child's streamed text, reasoning, tool calls and
    /// results; `None` (the default) tells no one.
    pub content: Option<ContentSink>,
    /// The MCP servers runs may select by tool name (`mcp__NAME`), from
    /// the config files; none by default.
    pub mcp_servers: crate::mcp::McpRegistry,
}

impl SupervisorConfig {
    /// A config with defaults for everything but the worker and sessions dir.
    pub fn new(worker: WorkerCommand, sessions_dir: PathBuf) -> Self {
        Self {
            worker,
            sessions_dir,
            operator_files: Vec::new(),
            max_concurrent: DEFAULT_MAX_CONCURRENT,
            max_per_call: DEFAULT_MAX_PER_CALL,
            max_spawns: None,
            max_tree_spawns: DEFAULT_MAX_TREE_SPAWNS,
            sandbox_policy: SandboxPolicy::BestEffort,
            requested_by: default_requested_by(),
            catalog: AgentCatalog::builtin(),
            subagents_disabled: None,
            progress: None,
            content: None,
            mcp_servers: crate::mcp::McpRegistry::default(),
        }
    }
}

/// The user's login when known, else "assistant" (the lifecycle-line rule).
fn default_requested_by() -> String {
    std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "assistant".to_owned())
}

/// The tools a child at `child_depth` gets: the subagent tool is removed when
/// the child is at the depth limit, so it cannot even try to recurse.
pub(super) fn tools_for_depth(tools: Vec<String>, child_depth: u32, max_depth: u32) -> Vec<String> {
    if child_depth >= max_depth {
        tools.into_iter().filter(|t| t != SUBAGENT_TOOL).collect()
    } else {
        tools
    }
}
