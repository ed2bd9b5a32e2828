//! The `frames` group: what hostile workers sending maximal frames cost the
//! supervisor's memory (issue 23), through the real `subagent` binary and
//! the fixture worker's frame tasks (the same as the `frame_memory` tests).
//!
//! - One worker (`subagent run`, `fixture:big-frames-3`: three text deltas
//!   of the default frame cap each): the supervisor's peak RSS beside a
//!   plain run's.
//! - A hundred hostile workers (`subagent batch -j 101`,
//!   `fixture:held-frames-2`: each holds back the last byte of its first
//!   maximal frame until every such frame is in flight or waiting for the
//!   frame budget) and one good worker (`fixture:gated-frames-200`) that
//!   sends 200 small frames once the budget is held: the peak beside a
//!   plain batch of the same size, and how long the good worker's result
//!   took.
//!
//! Peak RSS is `VmHWM`, read every millisecond until the process exits.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use subagent_protocol::frame::DEFAULT_MAX_PAYLOAD;
use subagent_supervisor::run::{FRAME_BUDGET_BYTES, SMALL_FRAME_RESERVE_BYTES};

use crate::context::BenchContext;
use crate::report::{Row, Target};
use crate::timing::ms;
use crate::worker_rss::children_running;

const MIB: f64 = 1024.0 * 1024.0;

/// Runs of each single-worker case; peak RSS barely varies, the median of
/// a few is enough.
const ONE_WORKER_RUNS: usize = 5;

/// What one worker costs the supervisor besides its frames: its tasks and
/// buffers (the `frame_memory` test's slack).
const ONE_WORKER_CONSTANT_MIB: f64 = 4.0;

/// Hostile workers in the batch, as in the `frame_memory` test.
const HOSTILE: usize = 100;

/// What a hundred workers cost the supervisor past a plain batch besides
/// the frame pools: their tasks, buffers and session writers (the
/// `frame_memory` test's slack).
const HOSTILE_CONSTANT_MIB: f64 = 24.0;

/// Small frames the good worker sends while the budget is held.
const GOOD_FRAMES: usize = 200;

/// How long the good worker's result may take once it may send: far
/// below the 180 s idle timeout that would otherwise end the hostile runs
/// holding the budget (and that the good run could hit itself).
const GOOD_WITHIN_MS: f64 = 1000.0;

/// How long a step of the hostile batch may take before the group gives up.
const STEP_LIMIT: Duration = Duration::from_secs(300);

/// What the supervisor logs (at debug level) when a frame waits for the
/// frame budget.
const WAITS_LOG: &str = "a frame waits for room in the supervisor-wide frame budget";

pub fn run(cx: &BenchContext) -> Result<Vec<Row>> {
    let dir = tempfile::tempdir()?;
    let mut rows = vec![one_worker(cx, dir.path())?];
    rows.extend(hostile(cx, dir.path())?);
    Ok(rows)
}

/// `subagent` with the fixture worker and no model, quiet, in `dir`.
fn fixture_command(cx: &BenchContext, dir: &Path, args: &[&str]) -> Result<Command> {
    let mut command = Command::new(cx.binary("subagent")?);
    command
        .args(args)
        .arg("--worker")
        .arg(cx.binary("fixture-worker")?)
        .arg("--sessions-dir")
        .arg(dir.join("sessions"))
        .arg("--workspace")
        .arg(dir.join("ws"))
        .args([
            "--model",
            "fixture-model",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ]);
    crate::context::isolate(&mut command, dir);
    Ok(command)
}

/// A fresh directory under `root` with an empty workspace.
fn case_dir(root: &Path, name: &str) -> Result<PathBuf> {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("ws"))?;
    Ok(dir)
}

/// Bytes as MiB.
fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Runs `command` to its end; its peak RSS (MiB), failing unless it exits 0.
fn peak_of(mut command: Command, what: &str) -> Result<f64> {
    let mut child = command.spawn().with_context(|| format!("start {what}"))?;
    let sampler = subagent_tests::sample_peak_rss(child.id());
    let status = child.wait()?;
    let peak = mib(sampler
        .join()
        .map_err(|_| anyhow::anyhow!("the RSS sampler panicked"))?);
    if !status.success() {
        bail!("{what} failed: {status}");
    }
    Ok(peak)
}

fn one_worker(cx: &BenchContext, root: &Path) -> Result<Row> {
    let dir = case_dir(root, "one")?;
    let peaks = |task: &str| -> Result<Vec<f64>> {
        (0..ONE_WORKER_RUNS)
            .map(|_| {
                let command = fixture_command(cx, &dir, &["run", "--task", task])?;
                peak_of(command, &format!("subagent run --task {task}"))
            })
            .collect()
    };
    let plain = Row::timed(
        "frames.one_worker_plain",
        "plain run",
        "MiB",
        &peaks("fixture:success")?,
    );
    let cap = f64::from(DEFAULT_MAX_PAYLOAD) / MIB;
    let over = cap * 1.2 + ONE_WORKER_CONSTANT_MIB;
    let left = children_running("fixture-worker").len();
    if left > 0 {
        bail!("{left} fixture workers remain after the single-worker runs");
    }
    Ok(Row::timed(
        "frames.one_worker_peak",
        "supervisor (subagent run) peak RSS, one worker sending three maximal frames",
        "MiB",
        &peaks("fixture:big-frames-3")?,
    )
    .against("plain run", plain.figure)
    .target(Target::OverBaselineAtMost(over))
    .note(format!(
        "bound: plain run + 1.2 x the {cap:.0} MiB frame cap + {ONE_WORKER_CONSTANT_MIB:.0} MiB; median of {ONE_WORKER_RUNS} runs each"
    )))
}

/// A batch stopped with SIGTERM (it ends its workers) if the group gives up
/// before it ended.
struct StopOnDrop(Child);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            if let Ok(pid) = libc::pid_t::try_from(self.0.id()) {
                // SAFETY: kill takes plain integers; the pid is our unreaped child.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            let _ = self.0.wait();
        }
    }
}

/// Waits until `done`, checking every 20 ms, or fails after [`STEP_LIMIT`].
fn wait_for(what: &str, done: impl Fn() -> bool) -> Result<()> {
    let deadline = Instant::now() + STEP_LIMIT;
    while !done() {
        if Instant::now() > deadline {
            bail!("waited {STEP_LIMIT:?} for {what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// The result lines of `results` (complete ones only).
fn results(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn write_tasks(dir: &Path, tasks: impl Iterator<Item = String>) -> Result<PathBuf> {
    let path = dir.join("tasks.jsonl");
    std::fs::write(&path, tasks.map(|t| t + "\n").collect::<String>())?;
    Ok(path)
}

fn batch_command(cx: &BenchContext, dir: &Path, tasks: &Path) -> Result<Command> {
    let jobs = (HOSTILE + 1).to_string();
    let tasks = tasks.to_string_lossy();
    let results = dir.join("results.jsonl");
    let results = results.to_string_lossy();
    #[rustfmt::skip]
    let args = ["batch", &tasks, "--results", &results, "-j", &jobs, "--max-concurrent", &jobs];
    fixture_command(cx, dir, &args)
}

fn hostile(cx: &BenchContext, root: &Path) -> Result<Vec<Row>> {
    let plain_dir = case_dir(root, "plain-batch")?;
    let tasks = write_tasks(
        &plain_dir,
        (0..=HOSTILE).map(|n| format!(r#"{{"id":"p{n}","task":"fixture:success"}}"#)),
    )?;
    let base = peak_of(
        batch_command(cx, &plain_dir, &tasks)?,
        "the plain subagent batch",
    )?;

    let dir = case_dir(root, "hostile-batch")?;
    let tasks = write_tasks(
        &dir,
        (0..HOSTILE)
            .map(|n| format!(r#"{{"id":"w{n}","task":"fixture:held-frames-2"}}"#))
            .chain([format!(
                r#"{{"id":"good","task":"fixture:gated-frames-{GOOD_FRAMES}"}}"#
            )]),
    )?;
    let mut command = batch_command(cx, &dir, &tasks)?;
    command
        .env("RUST_LOG", "subagent_supervisor=debug")
        .stderr(Stdio::piped());
    let mut batch = StopOnDrop(command.spawn().context("start the hostile batch")?);
    let sampler = subagent_tests::sample_peak_rss(batch.0.id());
    let waits = Arc::new(AtomicUsize::new(0));
    let err = batch.0.stderr.take().context("the batch's stderr")?;
    let counter = Arc::clone(&waits);
    // Drains the log to its end so the batch never blocks on it.
    let log = std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if line.contains(WAITS_LOG) {
                counter.fetch_add(1, Ordering::Relaxed);
            }
        }
    });
    let ws = dir.join("ws");
    let held = || subagent_tests::held_frames(&ws).unwrap_or(0);
    wait_for(
        "every hostile worker's frame in flight or waiting for the budget",
        || held() + waits.load(Ordering::Relaxed) >= HOSTILE,
    )?;
    let (in_flight, waiting) = (held(), waits.load(Ordering::Relaxed));

    let go = Instant::now();
    std::fs::write(ws.join(subagent_tests::GO_FILE), b"")?;
    let results_path = dir.join("results.jsonl");
    let good = || {
        results(&results_path)
            .into_iter()
            .find(|r| r["id"] == "good")
    };
    wait_for("the good worker's result while the budget is held", || {
        good().is_some()
    })?;
    let good_ms = ms(go.elapsed());
    if let Some(r) = good().filter(|r| r["status"] != "ok") {
        bail!("the good worker's run did not end ok: {r}");
    }

    std::fs::write(ws.join(subagent_tests::RELEASE_FILE), b"")?;
    let status = batch.0.wait()?;
    let peak = mib(sampler
        .join()
        .map_err(|_| anyhow::anyhow!("the RSS sampler panicked"))?);
    let _ = log.join();
    if !status.success() {
        bail!("the hostile batch failed: {status}");
    }
    let all = results(&results_path);
    let ok = all.iter().filter(|r| r["status"] == "ok").count();
    if ok != HOSTILE + 1 {
        bail!("{ok} of {} runs ended ok", HOSTILE + 1);
    }
    let left = children_running("fixture-worker").len();
    if left > 0 {
        bail!("{left} fixture workers remain after the hostile batch");
    }

    let budget = f64::from(FRAME_BUDGET_BYTES) / MIB;
    let reserve = f64::from(SMALL_FRAME_RESERVE_BYTES) / MIB;
    let bound = budget + reserve + HOSTILE_CONSTANT_MIB;
    Ok(vec![
        Row::single(
            "frames.hostile_100",
            "supervisor (subagent batch) peak RSS, 100 hostile workers holding maximal frames",
            "MiB",
            peak,
        )
        .against("plain batch of 101", base)
        .target(Target::OverBaselineAtMost(bound))
        .note(format!(
            "bound: plain + the {budget:.0} MiB frame budget + the {reserve:.0} MiB small-frame reserve + {HOSTILE_CONSTANT_MIB:.0} MiB; {in_flight} frames held in flight, {waiting} waiting; all {} runs ok, no worker left",
            HOSTILE + 1
        )),
        Row::single(
            "frames.small_while_held",
            "a good worker's 200 small frames and result while those 100 hold the budget",
            "ms",
            good_ms,
        )
        .target(Target::AtMost(GOOD_WITHIN_MS))
        .note("before the small-frame reserve it waited for the hostile runs' release or their 180 s idle timeout"),
    ])
}
