//! `subagent serve --stdio`: its flags, and the wiring of the library's
//! JSON-lines server ([`subagent_supervisor::serve::StdioServer`]) to the
//! runtime and the terminal.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;
use subagent_supervisor::exit_codes;
use subagent_supervisor::serve::{ServeDefaults, StdioOptions, StdioServer};

use super::run_flags::RunFlags;
use super::trust::print_warning;
use crate::console;

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
pub(super) fn serve_stdio(flags: RunFlags, args: StdioArgs) -> Result<i32> {
    let options = StdioOptions {
        notify_cmd: args.notify_cmd,
        parent_session: args.parent_session,
    };
    let server = StdioServer::new(flags.serve_defaults(), options, Arc::new(console::err))?;
    let runtime = super::runtime::supervisor_runtime()?;
    runtime.block_on(server.run())?;
    Ok(exit_codes::OK)
}
