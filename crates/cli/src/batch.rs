//! `subagent batch`: runs a JSONL tasks file through one supervisor, `-j`
//! at a time, appending one fsynced line per finished task to the results
//! file; resumes from that file, runs only its `--shard`, and stops cleanly
//! on SIGINT/SIGTERM. `subagent batch merge` joins shards' results files.
//!
//! The tasks file, the shard and every task line's settings are checked
//! before anything starts: a bad line, a duplicate id, an unknown provider
//! on one line refuses the whole batch (exit 2). The pieces are in the
//! library's `batch` module; this file wires them to the supervisor, the
//! progress bar and the terminal.
//!
//! Crash safety: a result line is on disk before the task counts as done,
//! so a SIGKILL loses only tasks in flight, and those run again on the
//! next start. Their workers die with this process: the sandbox spawns
//! every worker with a parent-death signal (`PR_SET_PDEATHSIG`, SIGKILL),
//! which the kernel sends when the supervisor dies, however it dies.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use subagent_supervisor::batch::results::read_scan;
use subagent_supervisor::batch::{
    BatchOutcome, BatchProgress, PreflightError, ResultsFile, ResultsWriter, Shard, Tally,
    TaskLine, check_settings, execute as execute_batch, merge_results, parse_tasks, plan,
    preflight, read_task_bytes, write_merged,
};
use subagent_supervisor::run::{DEFAULT_MAX_CONCURRENT, MAX_CONCURRENT_CEILING, Owner};
use subagent_supervisor::{RunRequest, Supervisor, SupervisorConfig};

use crate::exit::{self, Ending};
use tokio_util::sync::CancellationToken;

use super::run_flags::{RunFlags, env_value};
use super::trust::print_warning;
use crate::console;

/// How often the progress bar is redrawn (100 ms), as `run`'s status line.
const TICK: Duration = Duration::from_millis(100);

/// `-j` when not given: as `run --parallel`'s default concurrency.
const DEFAULT_JOBS: u64 = 4;

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(super) struct BatchArgs {
    #[command(subcommand)]
    command: Option<BatchCommand>,
    /// The tasks file: one JSON object per line, `{"id": "t1", "task": "..."}`
    /// with optional `agent`, `provider`, `model`, `limits` (config.toml's
    /// `[limits]` keys) and `outputSchema` (inline JSON Schema); a line's
    /// settings override the flags below (the tasks file is the operator's
    /// own input), unless --ceilings-from-flags.
    #[arg(value_name = "TASKS.jsonl", required = true)]
    tasks: Option<PathBuf>,
    /// Results file: one JSON line per finished task, appended and fsynced as
    /// each ends. Ids already in it are skipped (a re-run resumes).
    #[arg(long, value_name = "FILE", required = true)]
    results: Option<PathBuf>,
    /// Tasks running at a time; above --max-concurrent the rest queue.
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value_t = DEFAULT_JOBS,
        allow_negative_numbers = true,
        value_parser = clap::value_parser!(u64).range(1..))]
    jobs: u64,
    /// The supervisor's limit on children running at once (default:
    /// `max_concurrent` of config.toml, else 16).
    #[arg(long, value_name = "N", allow_negative_numbers = true,
        value_parser = clap::value_parser!(u64).range(1..=MAX_CONCURRENT_CEILING as u64))]
    max_concurrent: Option<u64>,
    /// Run only this shard's tasks: `i/n` (0-based) owns the ids whose FNV-1a
    /// 64 hash mod n is i. `auto` reads i from JOB_COMPLETION_INDEX
    /// (Kubernetes Indexed Job; give --shards) or SLURM_ARRAY_TASK_ID minus
    /// SLURM_ARRAY_TASK_MIN (Slurm array; n from --shards, else
    /// SLURM_ARRAY_TASK_COUNT).
    #[arg(long, value_name = "i/n|auto")]
    shard: Option<String>,
    /// With --shard auto: the number of shards.
    #[arg(long, value_name = "N", allow_negative_numbers = true,
        value_parser = clap::value_parser!(u64).range(1..))]
    shards: Option<u64>,
    /// Make these flags (with config and the agent they choose) ceilings
    /// for the task lines, as a server's are for its requests: a line may
    /// lower a limit or pick a model or agent the flags allow, and a line
    /// that asks above them refuses the batch (exit 2). For tasks files
    /// that come from elsewhere.
    #[arg(long)]
    ceilings_from_flags: bool,
    /// Run the tasks that were in flight when an earlier run of this batch
    /// died from the start, instead of continuing each from its session
    /// file's last complete turn.
    #[arg(long)]
    restart_interrupted: bool,
    #[command(flatten)]
    flags: RunFlags,
}

#[derive(Debug, clap::Subcommand)]
enum BatchCommand {
    /// Join shards' results files into one (first line of each id kept);
    /// report missing, duplicate and unknown ids. Exit 1 when there are any.
    #[command(after_help = "EXAMPLES:\n  \
        # three shards' results into one, checked against the tasks\n  \
        subagent batch merge shard-0.jsonl shard-1.jsonl shard-2.jsonl \\\n      \
        -o results.jsonl --tasks tasks.jsonl")]
    Merge(MergeArgs),
}

#[derive(Debug, clap::Args)]
struct MergeArgs {
    /// The shards' results files.
    #[arg(value_name = "RESULTS.jsonl", required = true)]
    inputs: Vec<PathBuf>,
    /// Where the joined results go (replaced atomically).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: PathBuf,
    /// The batch's tasks file, to report ids with no result (and results
    /// with no task).
    #[arg(long, value_name = "TASKS.jsonl")]
    tasks: Option<PathBuf>,
}

pub(super) fn run(args: BatchArgs) -> Result<Ending> {
    if let Some(BatchCommand::Merge(merge)) = args.command {
        return run_merge(&merge);
    }
    let (Some(tasks_path), Some(results_path)) = (&args.tasks, &args.results) else {
        bail!("usage: subagent batch TASKS.jsonl --results FILE (see --help)");
    };
    let bytes = std::fs::read(tasks_path)
        .with_context(|| format!("cannot read the tasks file {}", tasks_path.display()))?;
    let (tasks, problems) = read_task_bytes(&bytes);
    let shard = Shard::resolve(args.shard.as_deref(), args.shards, &env_value)?;
    // Every line's settings are checked, not only this shard's or the
    // pending ones': each shard of a batch sees the same verdict, and every
    // problem of the file is told at once.
    let ceilings =
        if args.ceilings_from_flags {
            Some(args.flags.ceilings(Owner::Batch).context(
                "--ceilings-from-flags: the flags must make a complete run by themselves",
            )?)
        } else {
            None
        };
    let checked = check_settings(
        &args.flags.settings(),
        &args.flags.overrides(),
        &tasks,
        problems,
        ceilings.as_ref(),
        &print_warning,
    )?;
    // A machine that cannot keep a task's record or start its worker would
    // fail every task the same way: refuse before the first, recording none
    // (not even a results file).
    if let Some(config) = checked.config()
        && let Err(e) = preflight(&config.sessions_dir, &config.worker.program)
    {
        console::err(&format!("batch not started: {e}"));
        return Ok(match e {
            PreflightError::SessionsDir { .. } => Ending::SessionsDirUnwritable,
            _ => Ending::WorkerMissing,
        });
    }
    let max_concurrent = match args.max_concurrent {
        Some(n) => usize::try_from(n).unwrap_or(DEFAULT_MAX_CONCURRENT),
        None => checked
            .config()
            .map_or(DEFAULT_MAX_CONCURRENT, |c| c.max_concurrent),
    };
    let concurrency = usize::try_from(args.jobs)
        .unwrap_or(max_concurrent)
        .min(max_concurrent);
    let owned: Vec<TaskLine> = tasks.into_iter().filter(|t| shard.owns(&t.id)).collect();
    // Found out now, recording nothing, rather than as EMFILE in the spawn
    // of task 300, recorded as that task's failure.
    let live = concurrency.min(owned.len()) as u64;
    if let Ok(limit) = subagent_sandbox::open_files_limit()
        && let Err(e) = subagent_supervisor::run::check_open_files(live, limit)
    {
        console::err(&format!("batch not started: -j {}: {e}", args.jobs));
        return Ok(Ending::InputRefused);
    }
    // Locked from here on: a second batch on this file is refused rather
    // than running the same tasks.
    let (resumed, writer) = ResultsFile::open(results_path)?;
    if resumed.dropped_torn_tail {
        console::err("results file: dropped a torn last line; its task runs again");
    }
    let pending: Vec<TaskLine> = owned
        .iter()
        .filter(|t| !resumed.done.contains(&t.id))
        .cloned()
        .collect();
    let skipped = (owned.len() - pending.len()) as u64;
    // Recorded failures of this shard fail a re-run too, even one that
    // runs nothing: a retried failed shard must not turn green.
    let failed_before = owned
        .iter()
        .filter(|t| resumed.failed.contains(&t.id))
        .count();
    if failed_before > 0 {
        console::err(&format!(
            "batch: {failed_before} task(s) already in results failed or timed out (exit 1); \
             remove their lines from the results file to run them again"
        ));
    }
    let recorded_exit = if failed_before > 0 {
        Ending::TasksFailed
    } else {
        Ending::Success
    };
    let planned = plan(checked, pending);
    console::err(&format!(
        "batch: {} task(s) for shard {shard}, {skipped} already in results, {} to run, {concurrency} at a time",
        owned.len(),
        planned.requests.len()
    ));
    let Some(mut config) = planned.config else {
        for line in Tally::default().render(skipped, 0) {
            console::err(&line);
        }
        return Ok(recorded_exit);
    };
    config.max_concurrent = max_concurrent;
    let mut requests = planned.requests;
    let results_abs = std::path::absolute(results_path)
        .with_context(|| format!("cannot resolve {}", results_path.display()))?;
    // Kept read-only for the tasks' tools when it lies in their workspace.
    config.operator_files.push(results_abs.clone());
    for (id, request) in &mut requests {
        request.batch_task = Some(subagent_protocol::session::BatchTask {
            results: results_abs.display().to_string(),
            id: id.clone(),
        });
    }
    if !args.restart_interrupted {
        let found = subagent_supervisor::batch::continue_in_flight(
            &config.sessions_dir,
            &results_abs,
            &mut requests,
        );
        for (id, turns) in &found.continued {
            console::err(&format!("task `{id}`: continues from turn {turns}"));
        }
        for why in &found.restarted {
            console::err(&format!("{why}; it runs from the start"));
        }
    }
    // The tasks' runs are spans of one batch span (when traces are on).
    let batch_span = subagent_supervisor::telemetry::current().batch_span(requests.len());
    for (_, request) in &mut requests {
        request.trace_parent = batch_span.parent();
    }
    let outcome = execute(config, requests, concurrency, writer)?;
    let Outcome { batch, cancelled } = outcome;
    batch_span
        .end(usize::try_from(batch.tally.failed + batch.tally.timed_out).unwrap_or(usize::MAX));
    for line in batch.tally.render(skipped, batch.not_run) {
        console::err(&line);
    }
    if let Some(stop) = &batch.stopped {
        console::err(&format!("batch stopped: {}", stop.message));
        return Ok(Ending::BatchStopped(stop.cause));
    }
    Ok(if cancelled {
        Ending::Cancelled
    } else if batch.tally.failed + batch.tally.timed_out > 0 || failed_before > 0 {
        Ending::TasksFailed
    } else {
        Ending::Success
    })
}

/// How the run ended.
struct Outcome {
    batch: BatchOutcome,
    /// A signal stopped the batch.
    cancelled: bool,
}

/// The bar's text now.
fn counts(progress: &BatchProgress) -> String {
    let (live_tokens, live_cost) = progress.live_usage();
    let text = counts_text(
        &progress.tally(),
        progress.total(),
        progress.running(),
        live_tokens,
        live_cost,
    );
    // The running tasks' task lists (`todo_write`), summed: counts only,
    // so the bar holds no model text.
    match progress.live_todos() {
        (_, 0) => text,
        (done, total) => format!("{text} · tasks {done}/{total}"),
    }
}

/// Width of the drawn bar, in cells.
const BAR_CELLS: u64 = 20;

/// `[#####---------------] 5/20 · ok 4 · failed 1 · running 4 · 1234 tok · $0.0100`:
/// finished tasks' tokens and cost plus the running ones' so far.
fn counts_text(
    tally: &Tally,
    total: u64,
    running: u64,
    live_tokens: u64,
    live_cost: f64,
) -> String {
    let done = tally.done();
    let filled = (done * BAR_CELLS)
        .checked_div(total)
        .unwrap_or(BAR_CELLS)
        .min(BAR_CELLS);
    format!(
        "[{}{}] {done}/{total} · ok {} · failed {} · running {running} · {} tok · ${:.4}",
        "#".repeat(filled as usize),
        "-".repeat((BAR_CELLS - filled) as usize),
        tally.ok,
        tally.failed + tally.timed_out,
        tally.tokens() + live_tokens,
        tally.usage.cost + live_cost,
    )
}

fn execute(
    mut config: SupervisorConfig,
    requests: Vec<(String, RunRequest)>,
    concurrency: usize,
    writer: ResultsWriter,
) -> Result<Outcome> {
    let progress = Arc::new(BatchProgress::new(requests.len() as u64));
    let bar = progress_bar(&progress);
    config.progress = Some(progress.sink());
    let runtime = super::runtime::supervisor_runtime()?;
    let cancel = CancellationToken::new();
    let signalled = CancellationToken::new();
    let batch = runtime.block_on(async {
        let supervisor = Supervisor::new(config);
        let (on_signal, mark) = (cancel.clone(), signalled.clone());
        tokio::spawn(async move {
            if super::runtime::wait_for_interrupt().await {
                mark.cancel();
                on_signal.cancel();
            }
        });
        execute_batch(
            &supervisor,
            requests,
            concurrency,
            writer,
            &cancel,
            &progress,
            exit::for_error,
        )
        .await
    });
    bar.finish_and_clear();
    Ok(Outcome {
        batch,
        cancelled: signalled.is_cancelled(),
    })
}

/// The bar on stderr when it is a terminal, redrawn by indicatif's ticker
/// thread from `shared`; hidden (no output at all) otherwise.
fn progress_bar(shared: &Arc<BatchProgress>) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    // Log lines go above the bar, not through it.
    let bar = super::status::bars_under_logs().add(ProgressBar::no_length());
    let state = Arc::clone(shared);
    if let Ok(style) = ProgressStyle::with_template("{spinner} {counts} [{elapsed}]") {
        bar.set_style(style.with_key(
            "counts",
            move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&counts(&state));
            },
        ));
    }
    bar.enable_steady_tick(TICK);
    bar
}

/// `subagent batch merge`.
fn run_merge(args: &MergeArgs) -> Result<Ending> {
    let mut scans = Vec::with_capacity(args.inputs.len());
    for input in &args.inputs {
        if !input.exists() {
            bail!("results file {} does not exist", input.display());
        }
        let scan = read_scan(input)?;
        if scan.torn_tail {
            console::err(&format!(
                "{}: ignoring a torn last line (that shard was killed mid-write; re-run it to finish)",
                input.display()
            ));
        }
        scans.push(scan);
    }
    let expected = match &args.tasks {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the tasks file {}", path.display()))?;
            Some(
                parse_tasks(&text)?
                    .into_iter()
                    .map(|t| t.id)
                    .collect::<Vec<_>>(),
            )
        }
    };
    let report = merge_results(&scans, expected.as_deref());
    let written = write_merged(&args.output, &report.lines)?;
    for leftover in &written.removed_leftovers {
        console::err(&format!(
            "removed {}, left by a merge that did not finish",
            leftover.display()
        ));
    }
    console::err(&format!(
        "merged {} result(s) from {} file(s) into {}",
        report.lines.len(),
        args.inputs.len(),
        args.output.display()
    ));
    if !report.missing.is_empty() {
        console::err(&format!(
            "missing {} id(s): {}",
            report.missing.len(),
            id_list(report.missing.iter().map(String::as_str))
        ));
    }
    if !report.duplicates.is_empty() {
        console::err(&format!(
            "duplicate {} id(s): {}",
            report.duplicates.len(),
            id_list(report.duplicates.iter().map(|(id, _)| id.as_str()))
        ));
    }
    if !report.unknown.is_empty() {
        console::err(&format!(
            "{} id(s) not in the tasks file: {}",
            report.unknown.len(),
            id_list(report.unknown.iter().map(String::as_str))
        ));
    }
    Ok(if report.is_complete() {
        Ending::Success
    } else {
        Ending::TasksFailed
    })
}

/// Up to 20 ids, then a count of the rest: a line a person can read.
fn id_list<'a>(ids: impl Iterator<Item = &'a str>) -> String {
    const SHOWN: usize = 20;
    let ids: Vec<&str> = ids.collect();
    let mut text = ids
        .iter()
        .take(SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > SHOWN {
        text.push_str(&format!(" and {} more", ids.len() - SHOWN));
    }
    text
}

#[cfg(test)]
#[path = "batch_tests.rs"]
mod tests;
