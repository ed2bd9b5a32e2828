//! `subagent serve --mcp | --stdio`: the flags, and the wiring of the
//! library's servers ([`subagent_supervisor::serve::McpServe`],
//! [`subagent_supervisor::serve::StdioServer`]) to the runtime and the
//! terminal.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;

use subagent_supervisor::serve::{
    McpServe, McpServeError, ServeDefaults, ServeError, StdioOptions, StdioServer,
};

use super::run_flags::RunFlags;
use super::trust::print_warning;
use crate::console;
use crate::error::RecordLost;
use crate::exit::Ending;

/// What a server says when its own record cannot be kept.
const SERVER_RECORD_LOST: &str = "the server's session file and jobs registry cannot be kept";

/// `subagent serve`: which protocol, and the defaults of every run.
#[derive(Debug, clap::Args)]
pub(super) struct ServeArgs {
    /// Speak MCP (Model Context Protocol) on stdin/stdout.
    #[arg(long, required_unless_present = "stdio", conflicts_with = "stdio")]
    mcp: bool,
    /// Speak the JSON-lines protocol on stdin/stdout.
    #[arg(long)]
    stdio: bool,
    #[command(flatten)]
    flags: RunFlags,
    #[command(flatten)]
    stdio_args: StdioArgs,
}

/// `subagent serve`: `--stdio` or `--mcp`.
pub(super) fn serve(args: ServeArgs) -> Result<Ending> {
    if args.stdio {
        return serve_stdio(args.flags, args.stdio_args);
    }
    serve_mcp(args.flags)
}

/// Runs the MCP server until the client closes stdin or a signal arrives.
fn serve_mcp(flags: RunFlags) -> Result<Ending> {
    let server = McpServe::new(flags.serve_defaults())?;
    let runtime = super::runtime::supervisor_runtime()?;
    let served = runtime.block_on(server.run());
    // A pending read of stdin cannot be cancelled; do not wait for it.
    runtime.shutdown_background();
    match served {
        Ok(()) => Ok(Ending::Success),
        Err(e @ (McpServeError::Jobs(_) | McpServeError::Recover(_))) => {
            Err(anyhow::Error::from(e).context(RecordLost(SERVER_RECORD_LOST)))
        }
        Err(e) => Err(e.into()),
    }
}

/// The flags `serve --stdio` adds to the run flags.
#[derive(Debug, Clone, clap::Args)]
pub(super) struct StdioArgs {
    /// When a background run ends, run CMD (with `sh -c`) with its lifecycle
    /// line on stdin; it gets 10 s, and its failure is logged, not fatal.
    #[arg(long, value_name = "CMD", requires = "stdio")]
    notify_cmd: Option<String>,
    /// The server's own session file, which receives every job's lifecycle
    /// lines [default: <sessions dir>/serve/serve-<pid>.jsonl].
    #[arg(long, value_name = "FILE", requires = "stdio")]
    parent_session: Option<PathBuf>,
}

impl RunFlags {
    /// These flags as a server's defaults; warnings go to stderr.
    pub(super) fn serve_defaults(&self) -> ServeDefaults {
        ServeDefaults {
            settings: self.settings(),
            overrides: self.overrides(),
            warn: Arc::new(print_warning),
        }
    }
}

/// Runs the JSON-lines server until stdin closes or a signal arrives.
fn serve_stdio(flags: RunFlags, args: StdioArgs) -> Result<Ending> {
    let options = StdioOptions {
        notify_cmd: args.notify_cmd,
        parent_session: args.parent_session,
    };
    let server = StdioServer::new(flags.serve_defaults(), options, Arc::new(console::err))?;
    let runtime = super::runtime::supervisor_runtime()?;
    let served = runtime.block_on(server.run());
    // The read of stdin runs on a blocking thread and cannot be cancelled:
    // dropping the runtime would wait for it, i.e. for the client to close
    // stdin, and a signal would not end the server. Every job has ended
    // by now; do not wait for that read.
    runtime.shutdown_background();
    match served {
        Ok(()) => Ok(Ending::Success),
        Err(e @ ServeError::Jobs(_)) => {
            Err(anyhow::Error::from(e).context(RecordLost(SERVER_RECORD_LOST)))
        }
        Err(e) => Err(e.into()),
    }
}
