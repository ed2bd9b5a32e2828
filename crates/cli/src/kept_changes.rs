//! `subagent apply RUN [--dry-run]` and `subagent diff RUN`: the changes a
//! run's copy-on-write layer kept (`--apply never`, or conflicts) applied
//! later with the same rules as at a run's end, or shown as a unified
//! diff against the workspace as it is now. The rules live in
//! `subagent_supervisor::layer`; this module parses, routes and prints.

use std::path::PathBuf;

use crate::exit::Ending;
use anyhow::{Context, Result};
use subagent_supervisor::layer::KeptLayer;
use subagent_supervisor::session::changes_text::changes_text;
use subagent_supervisor::session::default_sessions_dir;

use crate::console;

#[derive(Debug, clap::Args)]
#[command(after_help = "EXAMPLES:\n  \
    subagent run --apply never --task 'Fix the tests' --model smollm2\n  \
    subagent diff 3f2a9c1e                  # what it would change\n  \
    subagent apply 3f2a9c1e --dry-run       # what would be applied, conflicts, refusals\n  \
    subagent apply 3f2a9c1e\n\n\
    EXIT STATUS:\n  0 every change applied (or would be), 1 a conflict or refusal left some, 2 no such kept run")]
pub(super) struct ApplyArgs {
    /// The run whose kept changes to apply (its runId).
    #[arg(value_name = "RUN")]
    run: String,
    /// Say what would be applied, left as a conflict or refused; change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Where session files (and kept layers) are (default as for `run`).
    #[arg(long, value_name = "DIR")]
    sessions_dir: Option<PathBuf>,
    /// Print the outcome as the `changes` JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub(super) struct DiffArgs {
    /// The run whose kept changes to show (its runId).
    #[arg(value_name = "RUN")]
    run: String,
    /// Where session files (and kept layers) are (default as for `run`).
    #[arg(long, value_name = "DIR")]
    sessions_dir: Option<PathBuf>,
}

fn sessions_dir(given: Option<PathBuf>) -> Result<PathBuf> {
    given.or_else(default_sessions_dir).context(
        "no sessions dir: set SUBAGENT_HOME, XDG_STATE_HOME or HOME, or pass --sessions-dir",
    )
}

/// `subagent apply`.
pub(super) fn apply(args: ApplyArgs) -> Result<Ending> {
    let dir = sessions_dir(args.sessions_dir)?;
    let mut kept = KeptLayer::load(&dir, &args.run)?;
    let changes = kept.apply(args.dry_run)?;
    if args.json {
        console::out(&serde_json::to_string_pretty(&changes)?)?;
    } else {
        console::out_text(&changes_text(&changes))?;
    }
    Ok(
        if changes.conflicts.is_empty() && changes.refused.is_empty() {
            Ending::Success
        } else {
            Ending::ChangesLeft
        },
    )
}

/// `subagent diff`.
pub(super) fn diff(args: DiffArgs) -> Result<Ending> {
    let dir = sessions_dir(args.sessions_dir)?;
    let kept = KeptLayer::load(&dir, &args.run)?;
    console::out_text(kept.diff()?.trim_end())?;
    Ok(Ending::Success)
}
