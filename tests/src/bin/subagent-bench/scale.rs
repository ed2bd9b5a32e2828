//! The `scale` group: many children from one supervisor.
//!
//! - 1,000 live workers: `subagent batch -j 1000 --max-concurrent 1000`
//!   against a loopback model that holds every answer until all 1,000
//!   requests are in, so every worker is alive at once. The supervisor's
//!   RSS and open fds are read at 10, 100 and 1,000 live workers; after the
//!   batch, nothing it started may remain (processes, cgroups).
//! - 2,000 no-op tasks: `subagent batch -j 16` beside `xargs -P 16` running
//!   `subagent run` once per task, against a model that answers at once.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

use crate::context::BenchContext;
use crate::loopback::Loopback;
use crate::report::{Row, Target};
use crate::timing::ms;
use crate::worker_rss::children_running;

const LIVE: usize = 1000;
const NOOP_TASKS: usize = 2000;

fn tasks_file(dir: &Path, n: usize) -> Result<std::path::PathBuf> {
    let path = dir.join(format!("tasks-{n}.jsonl"));
    let lines: String = (0..n)
        .map(|i| format!("{{\"id\":\"t{i}\",\"task\":\"no-op task {i}\"}}\n"))
        .collect();
    std::fs::write(&path, lines)?;
    Ok(path)
}

fn model_flags(base_url: &str) -> [&str; 8] {
    [
        "--provider",
        "openai-chat",
        "--base-url",
        base_url,
        "--model",
        "bench",
        "--max-turns",
        "1",
    ]
}

fn quiet(command: &mut Command, dir: &Path) {
    command
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", dir.join("no-config"))
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
}

/// `VmRSS` and `VmHWM` (MiB) and open fds of `pid`.
fn memory_and_fds(pid: u32) -> Option<(f64, f64, usize)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<f64> {
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix(name))?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kib / 1024.0)
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count();
    Some((field("VmRSS:")?, field("VmHWM:")?, fds))
}

/// Result lines of `results` whose status is ok.
fn successes(results: &Path) -> Result<usize> {
    let text = std::fs::read_to_string(results)?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["status"] == "ok")
        .count())
}

/// Our cgroups left behind by `pid` (named `subagent-<pid>-<n>`).
fn cgroups_left(pid: u32) -> usize {
    let prefix = format!("subagent-{pid}-");
    let Ok(kind) = subagent_sandbox::cgroup_support() else {
        return 0;
    };
    let dirs = match kind {
        subagent_sandbox::CgroupKind::V1 {
            memory,
            pids,
            freezer,
            ..
        } => [Some(memory), Some(pids), freezer]
            .into_iter()
            .flatten()
            .collect(),
        subagent_sandbox::CgroupKind::V2 { dir, .. } => vec![dir],
        _ => Vec::new(),
    };
    dirs.iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|entries| entries.flatten())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .count()
}

/// What one held batch of `live` tasks looked like with all `live` workers
/// waiting on the model.
struct LiveSample {
    live: usize,
    rss: f64,
    peak: f64,
    fds: usize,
    threads: usize,
    all_live_ms: f64,
    total_ms: f64,
}

/// `subagent batch -j live --max-concurrent live` of `live` tasks against a
/// held model: sampled once every worker is waiting on it, then released and
/// checked (every task ok, no worker or cgroup left).
fn held_batch(cx: &BenchContext, dir: &Path, live: usize) -> Result<LiveSample> {
    let model = Loopback::start_held()?;
    let tasks = tasks_file(dir, live)?;
    let results = dir.join(format!("live-{live}-results.jsonl"));
    let mut command = Command::new(cx.binary("subagent")?);
    command
        .arg("batch")
        .arg(&tasks)
        .arg("--results")
        .arg(&results)
        .args([
            "-j",
            &live.to_string(),
            "--max-concurrent",
            &live.to_string(),
        ])
        .args(model_flags(&model.base_url()))
        .arg("--sessions-dir")
        .arg(dir.join(format!("live-{live}-sessions")));
    quiet(&mut command, dir);
    let started = Instant::now();
    let mut batch = command.spawn().context("start subagent batch")?;
    let pid = batch.id();
    if !model.wait_for_requests(live, Duration::from_secs(300)) {
        let _ = batch.kill();
        let _ = batch.wait();
        bail!("not all {live} workers reached the model within 300 s");
    }
    let all_live_ms = ms(started.elapsed());
    let (rss, mut peak, fds) = memory_and_fds(pid).context("read the batch's memory")?;
    let threads = threads_of(pid);
    model.release();
    let status = loop {
        if let Some((_, hwm, _)) = memory_and_fds(pid) {
            peak = peak.max(hwm);
        }
        if let Some(status) = batch.try_wait()? {
            break status;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let total_ms = ms(started.elapsed());
    if !status.success() {
        bail!("subagent batch -j {live} failed: {status}");
    }
    let ok = successes(&results)?;
    if ok != live {
        bail!("{ok} of {live} tasks succeeded");
    }
    let left = children_running("subagent-worker").len();
    let cgroups = cgroups_left(pid);
    if left > 0 || cgroups > 0 {
        bail!("after the batch of {live}: {left} workers and {cgroups} cgroups remain");
    }
    Ok(LiveSample {
        live,
        rss,
        peak,
        fds,
        threads,
        all_live_ms,
        total_ms,
    })
}

fn threads_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, Iterator::count)
}

fn live_workers(cx: &BenchContext, dir: &Path) -> Result<Row> {
    let samples: Vec<LiveSample> = [10, 100, LIVE]
        .into_iter()
        .map(|live| held_batch(cx, dir, live))
        .collect::<Result<_>>()?;
    let curve: Vec<String> = samples
        .iter()
        .map(|s| {
            format!(
                "{} live: {:.1} MiB RSS, {} fds, {} threads (all live after {:.1} s, done after {:.1} s)",
                s.live,
                s.rss,
                s.fds,
                s.threads,
                s.all_live_ms / 1e3,
                s.total_ms / 1e3
            )
        })
        .collect();
    let (first, last) = (&samples[0], &samples[samples.len() - 1]);
    let per = |a: f64, b: f64| (b - a) / (last.live - first.live) as f64;
    Ok(Row::single(
        "scale.live_1000",
        "supervisor (subagent batch) peak RSS with 1,000 live workers",
        "MiB",
        last.peak,
    )
    .target(Target::AtMost(64.0))
    .note(format!(
        "{}; per added live worker: {:.1} KiB RSS, {:.2} fds, {:.2} threads; every task ok, no worker or cgroup left after each batch",
        curve.join("; "),
        per(first.rss, last.rss) * 1024.0,
        per(first.fds as f64, last.fds as f64),
        per(first.threads as f64, last.threads as f64),
    )))
}

fn batch_vs_xargs(cx: &BenchContext, dir: &Path) -> Result<Row> {
    let model = Loopback::start()?;
    let tasks = tasks_file(dir, NOOP_TASKS)?;
    let results = dir.join("noop-results.jsonl");
    let subagent = cx.binary("subagent")?;
    let mut command = Command::new(&subagent);
    command
        .arg("batch")
        .arg(&tasks)
        .arg("--results")
        .arg(&results)
        .args(["-j", "16"])
        .args(model_flags(&model.base_url()))
        .arg("--sessions-dir")
        .arg(dir.join("noop-sessions"));
    quiet(&mut command, dir);
    let started = Instant::now();
    let status = command.status()?;
    let batch_ms = ms(started.elapsed());
    if !status.success() || successes(&results)? != NOOP_TASKS {
        bail!("the batch of {NOOP_TASKS} no-op tasks did not all succeed ({status})");
    }

    let script = format!(
        "seq {NOOP_TASKS} | xargs -P 16 -I{{}} {} run {} --sessions-dir {} --json --task 'no-op task {{}}'",
        subagent.display(),
        model_flags(&model.base_url()).join(" "),
        dir.join("xargs-sessions").display()
    );
    let mut xargs = Command::new("sh");
    xargs.args(["-c", &script]);
    quiet(&mut xargs, dir);
    let started = Instant::now();
    let status = xargs.status()?;
    let xargs_ms = ms(started.elapsed());
    if !status.success() {
        bail!("xargs running subagent run failed ({status}): some run exited non-zero");
    }
    Ok(Row::single(
        "scale.batch_vs_xargs",
        "2,000 no-op tasks: subagent batch -j 16, wall; ratio = batch/xargs",
        "ms",
        batch_ms,
    )
    .against("xargs -P 16 running subagent run per task", xargs_ms)
    .target(Target::RatioAtMost(1.0 / 1.5))
    .note(format!(
        "batch {:.1}x faster than xargs",
        xargs_ms / batch_ms
    )))
}

pub fn run(cx: &BenchContext) -> Result<Vec<Row>> {
    let dir = tempfile::tempdir()?;
    Ok(vec![
        live_workers(cx, dir.path())?,
        batch_vs_xargs(cx, dir.path())?,
    ])
}
