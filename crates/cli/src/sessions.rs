//! `subagent sessions`: the operator's view of session files (`ls`, `show`,
//! `tail`, `gc`, and through their own modules `replay` and `export`).
//! Flags in, text out; reading and formatting live in
//! `subagent_supervisor::session::{read, format}`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::exit::Ending;
use anyhow::{Context, Result};
use subagent_supervisor::session::default_sessions_dir;
use subagent_supervisor::session::format::{
    Style, format_closing, format_item, format_json, format_table, format_transcript,
};
use subagent_supervisor::session::gc::{plan_gc, remove_sessions};
use subagent_supervisor::session::read::{
    ReadItem, SessionFilter, SessionStatus, SessionSummary, find_session, is_terminal,
    list_session_files, list_sessions, read_session, summarize,
};
use subagent_supervisor::session::run_ids::{abbreviate, run_id_of_file_name};
use subagent_supervisor::session::tail::SessionTail;
use subagent_supervisor::units::parse_age;

use crate::console;

mod export;

mod replay;

mod verify;

/// How often `tail -f` looks for new lines: quick enough to feel live,
/// rare enough to cost nothing.
const TAIL_POLL: Duration = Duration::from_millis(200);

#[derive(Debug, clap::Args)]
#[command(after_help = "EXAMPLES:\n  \
    subagent sessions ls --since 2h --status failed     # what failed lately\n  \
    subagent sessions show 3f9c2a                        # one run as a transcript\n  \
    subagent sessions tail -f 3f9c2a                     # follow a running one\n  \
    subagent sessions replay 3f9c2a                      # re-run it offline against its recording\n  \
    subagent sessions verify 3f9c2a                      # is the file as subagent wrote it?\n  \
    subagent sessions export --html 3f9c2a -o run.html   # one self-contained page\n  \
    subagent sessions gc --older-than 30d --dry-run")]
pub(super) struct SessionsArgs {
    /// Where session files are (default: $SUBAGENT_HOME/sessions, else
    /// $XDG_STATE_HOME/subagent/sessions, else ~/.local/state/subagent/sessions).
    #[arg(long, value_name = "DIR", global = true)]
    sessions_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: SessionsCommand,
}

#[derive(Debug, clap::Subcommand)]
enum SessionsCommand {
    /// List runs, newest first: start, run id, agent, status, duration,
    /// tokens, cost and the head of the task.
    #[command(after_help = "EXAMPLES:\n  \
        # the failed runs of the last two hours\n  \
        subagent sessions ls --since 2h --status failed\n\n  \
        # the last five explorer runs, machine-readable\n  \
        subagent sessions ls --agent explorer --limit 5 --json\n\n\
        A run whose file has no ending lifecycle line (still running, or the \
        supervisor died) is `interrupted`.")]
    Ls(LsArgs),
    /// Print one run's transcript: header, messages, tool calls and results,
    /// usage, limits, logs, lifecycle and a closing summary.
    #[command(after_help = "EXAMPLES:\n  \
        # by run id, or any unique prefix of it\n  \
        subagent sessions show 3f9c2a\n\n  \
        # or by file\n  \
        subagent sessions show ~/.local/state/subagent/sessions/2026/11/22/3f9c2a...-general.jsonl")]
    Show(ShowArgs),
    /// Print a run's transcript lines; with -f, keep printing them as they
    /// are appended until the run ends (or Ctrl-C).
    #[command(after_help = "EXAMPLES:\n  \
        # follow a running subagent until it completes, fails or is aborted\n  \
        subagent sessions tail -f 3f9c2a")]
    Tail(TailArgs),
    /// Remove session files (and their .output.txt siblings) of runs that
    /// started longer ago than --older-than, then the emptied date dirs.
    #[command(after_help = "EXAMPLES:\n  \
        # see what would go, then do it\n  \
        subagent sessions gc --older-than 30d --dry-run\n  \
        subagent sessions gc --older-than 30d\n\n\
        The age is the start time in each file's header line, not the file's mtime.")]
    Gc(GcArgs),
    /// Run a recorded session again without a model: the recorded model
    /// turns are served back, the tools run again, and the first
    /// difference from the recording is reported.
    #[command(after_help = replay::AFTER_HELP)]
    Replay(replay::ReplayArgs),
    /// Check that a session file is as subagent wrote it: its chain of
    /// keyed line MACs holds, or the first line that breaks it.
    #[command(after_help = verify::VERIFY_HELP)]
    Verify(verify::VerifyArgs),
    /// Write one run as a single self-contained HTML page: header, usage
    /// chart, the timeline of turns, tool calls, limit hits and the ending.
    #[command(after_help = export::EXPORT_HELP)]
    Export(export::ExportArgs),
}

#[derive(Debug, clap::Args)]
struct LsArgs {
    /// Only runs started within this age: 90s, 15m, 2h, 3d.
    #[arg(long, value_name = "AGE", value_parser = parse_age)]
    since: Option<Duration>,
    /// Only runs that ended this way.
    #[arg(long, value_enum)]
    status: Option<SessionStatus>,
    /// Only runs of this agent.
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// At most this many runs (the newest).
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Print a JSON array instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct ShowArgs {
    /// A run id (or unique prefix) under the sessions dir, or a session file.
    #[arg(value_name = "RUN_ID|FILE")]
    run: String,
}

#[derive(Debug, clap::Args)]
struct TailArgs {
    /// Keep following the file until a run-ending lifecycle line arrives.
    #[arg(short = 'f', long)]
    follow: bool,
    /// A run id (or unique prefix) under the sessions dir, or a session file.
    #[arg(value_name = "RUN_ID|FILE")]
    run: String,
}

#[derive(Debug, clap::Args)]
struct GcArgs {
    /// Remove runs that started longer ago than this: 90s, 15m, 2h, 30d.
    #[arg(long, value_name = "AGE", value_parser = parse_age)]
    older_than: Duration,
    /// Print what would be removed and remove nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Runs one `sessions` subcommand; returns the exit code.
pub(super) fn run(args: SessionsArgs) -> Result<Ending> {
    let dir = args.sessions_dir.or_else(default_sessions_dir).context(
        "no sessions dir: set SUBAGENT_HOME, XDG_STATE_HOME or HOME, or pass --sessions-dir",
    )?;
    let terminal = std::io::stdout().is_terminal();
    let style = Style {
        color: terminal,
        terminal,
    };
    match args.command {
        SessionsCommand::Ls(a) => ls(&dir, a, style),
        SessionsCommand::Show(a) => show(&dir, &a.run, style),
        SessionsCommand::Tail(a) => tail(&dir, &a.run, a.follow, style),
        SessionsCommand::Gc(a) => gc(&dir, a),
        SessionsCommand::Export(a) => export::run(&dir, a),
        SessionsCommand::Replay(a) => replay::run(&dir, a),
        SessionsCommand::Verify(a) => verify::run(&dir, &a),
    }
}

fn ls(dir: &Path, args: LsArgs, style: Style) -> Result<Ending> {
    let filter = SessionFilter {
        since: args
            .since
            .and_then(|age| SystemTime::now().checked_sub(age)),
        status: args.status,
        agent: args.agent,
        limit: args.limit,
    };
    let (sessions, skipped) = list_sessions(dir)?;
    for why in &skipped {
        console::err(&format!("warning: skipped {why}"));
    }
    let sessions = filter.apply(sessions);
    if args.json {
        console::out(&format_json(&sessions)?)?;
    } else if sessions.is_empty() {
        console::err(&format!("no matching sessions under {}", dir.display()));
    } else {
        console::out(&format_table(&shortened(dir, sessions)?, style))?;
    }
    Ok(Ending::Success)
}

/// `sessions` with each run id as its shortest unique prefix (at least 8
/// digits) among all the runs of `dir`, listed or not, so that any id the
/// table shows names its run in `show`, `tail` or `--resume`.
fn shortened(dir: &Path, mut sessions: Vec<SessionSummary>) -> Result<Vec<SessionSummary>> {
    let names: Vec<String> = list_session_files(dir)?
        .iter()
        .filter_map(|f| f.file_name()?.to_str().map(str::to_owned))
        .collect();
    let all: Vec<&str> = names.iter().map(|n| run_id_of_file_name(n)).collect();
    let shown: Vec<&str> = sessions.iter().map(|s| s.run_id.as_str()).collect();
    let short = abbreviate(&shown, &all);
    for (session, id) in sessions.iter_mut().zip(short) {
        session.run_id = id;
    }
    Ok(sessions)
}

fn show(dir: &Path, run: &str, style: Style) -> Result<Ending> {
    let path = find_session(dir, run)?;
    let items = read_session(&path)?;
    let summary = summarize(&path, &items);
    console::out(&format!("{}", path.display()))?;
    console::out(&format_transcript(&items, summary.as_ref(), style))?;
    if let Some(s) = &summary {
        for (id, file) in subagent_supervisor::session::heads::continued_by(dir, &s.run_id) {
            console::out(&format!("continued by {id} ({})", file.display()))?;
        }
    }
    Ok(Ending::Success)
}

fn tail(dir: &Path, run: &str, follow: bool, style: Style) -> Result<Ending> {
    let path = find_session(dir, run)?;
    let mut tail = SessionTail::new(&path);
    let mut seen: Vec<ReadItem> = Vec::new();
    loop {
        let fresh = tail.poll()?;
        let ended = fresh.iter().any(is_terminal);
        for item in &fresh {
            console::out(&format_item(item, style))?;
        }
        seen.extend(fresh);
        // Ctrl-C needs no handler: SIGINT ends the process, and nothing
        // here holds state worth saving.
        if !follow || ended {
            break;
        }
        std::thread::sleep(TAIL_POLL);
    }
    if let Some(rest) = tail.finish() {
        console::out(&format_item(&rest, style))?;
        seen.push(rest);
    }
    if follow && let Some(summary) = summarize(&path, &seen) {
        console::out(&format_closing(&summary, style))?;
    }
    Ok(Ending::Success)
}

fn gc(dir: &Path, args: GcArgs) -> Result<Ending> {
    let victims = plan_gc(dir, args.older_than, SystemTime::now())?;
    if args.dry_run {
        for v in &victims {
            console::out(&format!(
                "would remove {} (started {})",
                v.session_file.display(),
                v.started_at
            ))?;
            for also in v.output_file.iter().chain(&v.kept_layer) {
                console::out(&format!("would remove {}", also.display()))?;
            }
        }
        console::out(&format!(
            "dry run: {} session(s) would be removed",
            victims.len()
        ))?;
        return Ok(Ending::Success);
    }
    for path in remove_sessions(dir, &victims)? {
        console::out(&format!("removed {}", path.display()))?;
    }
    console::out(&format!("{} session(s) removed", victims.len()))?;
    Ok(Ending::Success)
}
