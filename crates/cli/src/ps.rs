//! `subagent ps`: every live run of this user's sessions dir, what it does
//! now, for how long, and how long its worker has said nothing; once, as a
//! table or JSON, or again and again with `--watch`.
//!
//! Flags in, text out. Which runs are live, and why a record is believed,
//! is `subagent_supervisor::live`'s; the table is [`table`]'s, the
//! redrawing [`watch`]'s.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use subagent_supervisor::live::{LiveListing, list_live};
use subagent_supervisor::session::default_sessions_dir;
use subagent_supervisor::units::parse_duration;

use crate::console;
use crate::error::{RESULT_NOT_WRITTEN, RecordLost};
use crate::exit::Ending;

mod table;
mod watch;

#[derive(Debug, clap::Args)]
pub(super) struct PsArgs {
    /// Print a JSON array, one object per live run (runId, parentRunId,
    /// agent, model, state, tool, stateMs, silentMs, silent, turns, tokens,
    /// cost, pid, ...: README, Watching runs).
    #[arg(long)]
    json: bool,
    /// Keep watching: on a terminal, redraw the list in place every
    /// --interval until q or Ctrl-C; piped, print it every --interval
    /// (with --json one array per line) until interrupted.
    #[arg(long)]
    watch: bool,
    /// How often --watch redraws (e.g. 500ms, 2s).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = duration)]
    interval: Duration,
    /// Flag a run (`!` in the table, `silent: true` in JSON) whose worker
    /// has sent nothing for longer than this: stuck, or in a long model
    /// request or tool.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = duration)]
    silent_after: Duration,
    /// Where session files are (default: $SUBAGENT_HOME/sessions, else
    /// $XDG_STATE_HOME/subagent/sessions, else ~/.local/state/subagent/sessions).
    #[arg(long, value_name = "DIR")]
    sessions_dir: Option<PathBuf>,
}

fn duration(value: &str) -> Result<Duration, String> {
    parse_duration(value).map(|t| Duration::from_millis(t.ms))
}

/// What one look at the live runs prints.
#[derive(Debug, Clone, Copy)]
struct Shape {
    json: bool,
    /// Text is going to a terminal (stripped of control sequences there).
    terminal: bool,
    silent_after: Duration,
}

pub(super) fn run(args: PsArgs) -> Result<Ending> {
    let dir = args.sessions_dir.or_else(default_sessions_dir).context(
        "no sessions dir: set SUBAGENT_HOME, XDG_STATE_HOME or HOME, or pass --sessions-dir",
    )?;
    let shape = Shape {
        json: args.json,
        terminal: std::io::stdout().is_terminal(),
        silent_after: args.silent_after,
    };
    if args.watch {
        return watch::watch(&dir, shape, args.interval);
    }
    let listing = look(&dir, shape)?;
    console::out(&render(&listing, shape)?).context(RecordLost(RESULT_NOT_WRITTEN))?;
    Ok(Ending::Success)
}

/// The live runs under `dir` now.
fn look(dir: &std::path::Path, shape: Shape) -> Result<LiveListing> {
    list_live(dir, shape.silent_after).map_err(anyhow::Error::from)
}

/// The listing as printed: a JSON array (pretty, or on one line for
/// `--watch` piped), or the table.
fn render(listing: &LiveListing, shape: Shape) -> Result<String> {
    if shape.json {
        return serde_json::to_string_pretty(&listing.runs).context("cannot write the JSON");
    }
    Ok(table::table(listing, shape.terminal))
}
