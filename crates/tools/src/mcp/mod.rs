//! MCP servers of a run: each one a program speaking MCP over its stdio,
//! started in the tool sandbox when the run starts, its tools offered to the
//! model as `mcp__SERVER__TOOL`, stopped when the run ends.
//!
//! Started at the run's start, not at the first call: the model must see
//! the tools' names and input schemas in its first request, and only the
//! server can list them. Servers start side by side, each within its
//! `startup_timeout_ms`.
//!
//! A server that does not start, crashes, hangs, floods its output or
//! breaks JSON-RPC never fails the run: a server that did not start
//! offers no tools, a call to a server that broke is a tool error, and
//! what happened (with the server's stderr, capped) is said in the notes
//! the caller writes to the session file.
//!
//! This module decides nothing about which servers a run may use: the
//! supervisor resolved that into the [`McpServerSpec`]s.

mod content;
mod server;
mod tool;

use std::sync::Arc;

use subagent_protocol::McpServerSpec;
use subagent_protocol::message::LogLevel;

use crate::tool::{Tool, ToolContext};

pub use server::{MAX_MESSAGE_BYTES, MAX_SCHEMA_BYTES, MAX_TOOLS_PER_SERVER};

/// A line for the run's session file about a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpNote {
    /// How much it matters.
    pub level: LogLevel,
    /// What happened, naming the server.
    pub text: String,
}

/// The servers of one run that started, to stop when the run ends.
/// Dropped without [`McpServers::stop`], each server's tree is killed.
#[derive(Debug, Default)]
pub struct McpServers {
    servers: Vec<Arc<server::RunningServer>>,
}

/// What starting a run's servers gave.
#[derive(Default)]
pub struct McpStart {
    /// The tools to offer, `mcp__SERVER__TOOL`, in the servers' order.
    pub tools: Vec<Arc<dyn Tool>>,
    /// The servers, to stop at the run's end.
    pub servers: McpServers,
    /// What to write in the session file.
    pub notes: Vec<McpNote>,
}

/// Starts every server of `specs` side by side under `ctx`'s sandbox and
/// limits, and lists their tools.
pub async fn start_servers(specs: &[McpServerSpec], ctx: &ToolContext) -> McpStart {
    let started =
        futures_util::future::join_all(specs.iter().map(|spec| server::start(spec, ctx))).await;
    let mut start = McpStart::default();
    for (spec, result) in specs.iter().zip(started) {
        match result {
            Ok(running) => {
                let running = Arc::new(running);
                let (tools, notes) = tool::offered(&running, spec);
                start.tools.extend(tools);
                start.notes.extend(notes);
                start.servers.servers.push(running);
            }
            // A warning: the run goes on without the server, and an
            // error line would stand as the run's last error.
            Err(failure) => start.notes.push(McpNote {
                level: LogLevel::Warn,
                text: failure,
            }),
        }
    }
    start
}

impl std::fmt::Debug for McpStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpStart")
            .field(
                "tools",
                &self.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .field("servers", &self.servers)
            .field("notes", &self.notes)
            .finish()
    }
}

impl McpServers {
    /// True when no server runs.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Stops every server (end of input first, then SIGTERM and SIGKILL)
    /// and waits until each tree is gone; says how each ended.
    pub async fn stop(self) -> Vec<McpNote> {
        futures_util::future::join_all(self.servers.into_iter().map(server::stop)).await
    }
}
