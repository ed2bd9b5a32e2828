//! The `scale` group: many children from one supervisor.
//!
//! - 1,000 live workers: `subagent batch -j 1000 --max-concurrent 1000`
//!   against a loopback model that holds every answer until all 1,000
//!   requests are in, so every worker is alive at once. The supervisor's
//!   RSS and open fds are read at 10, 100 and 1,000 live workers; after the
//!   batch, nothing it started may remain (processes, cgroups).
//! - 5,000 live workers, the same way: the supervisor's peak RSS, its fds
//!   and threads per live worker, its open-files limit (raised to the hard
//!   limit at start), the machine's used memory per live worker
//!   (`MemTotal - MemAvailable` before the batch and with every worker
//!   live), the supervisor's CPU while every worker waits, and nothing
//!   left after.
//! - 2,000 no-op tasks: `subagent batch -j 16` beside `xargs -P 16` running
//!   `subagent run` once per task, against a model that answers at once.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

use crate::context::{BenchContext, isolate};
use crate::loopback::Loopback;
use crate::report::{Row, Target};
use crate::timing::ms;
use crate::worker_rss::children_running;

const LIVE: usize = 1000;
const LIVE_MAX: usize = 5000;

/// How long the supervisor's CPU is measured while every worker waits.
const HOLD_FOR_CPU: Duration = Duration::from_secs(5);
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

/// The `name: N kB` field of a /proc text, in MiB.
fn mib_field(text: &str, name: &str) -> Option<f64> {
    let kib: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix(name))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib / 1024.0)
}

/// `VmRSS` and `VmHWM` (MiB) and open fds of `pid`.
fn memory_and_fds(pid: u32) -> Option<(f64, f64, usize)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| mib_field(&status, name);
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
    /// The machine's used memory with every worker live, less before, MiB.
    machine_rise: f64,
    /// The supervisor's CPU over [`HOLD_FOR_CPU`] with every worker waiting, ms.
    idle_cpu_ms: f64,
    /// The supervisor's open-files soft and hard limits.
    open_files: (u64, u64),
}

/// `MemTotal - MemAvailable`, MiB.
fn machine_used_mib() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| mib_field(&text, name);
    Some(field("MemTotal:")? - field("MemAvailable:")?)
}

/// User plus system CPU of `pid` so far, ms.
fn cpu_ms(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which may hold spaces: utime and
    // stime are the 12th and 13th after it.
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks * 1000.0 / 100.0)
}

/// The soft and hard "Max open files" of `pid`.
fn open_files_limits(pid: u32) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/limits")).ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    let mut numbers = line
        .split_whitespace()
        .filter_map(|w| w.parse::<u64>().ok());
    Some((numbers.next()?, numbers.next()?))
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
    isolate(&mut command, dir);
    let used_before = machine_used_mib().context("read /proc/meminfo")?;
    let started = Instant::now();
    let mut batch = command.spawn().context("start subagent batch")?;
    let pid = batch.id();
    if !model.wait_for_requests(live, Duration::from_secs(600)) {
        let _ = batch.kill();
        let _ = batch.wait();
        bail!("not all {live} workers reached the model within 600 s");
    }
    let all_live_ms = ms(started.elapsed());
    let machine_rise = machine_used_mib().context("read /proc/meminfo")? - used_before;
    let (rss, mut peak, fds) = memory_and_fds(pid).context("read the batch's memory")?;
    let threads = threads_of(pid);
    let open_files = open_files_limits(pid).context("read the batch's limits")?;
    let idle_cpu_ms = if live == LIVE_MAX {
        let before = cpu_ms(pid).context("read the batch's CPU")?;
        std::thread::sleep(HOLD_FOR_CPU);
        cpu_ms(pid).context("read the batch's CPU")? - before
    } else {
        0.0
    };
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
        machine_rise,
        idle_cpu_ms,
        open_files,
    })
}

fn threads_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, Iterator::count)
}

fn live_workers(cx: &BenchContext, dir: &Path) -> Result<Vec<Row>> {
    let samples: Vec<LiveSample> = [10, 100, LIVE, LIVE_MAX]
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
    let first = &samples[0];
    let (thousand, most) = (&samples[2], &samples[3]);
    let per = |last: &LiveSample, a: f64, b: f64| (b - a) / (last.live - first.live) as f64;
    let slope = |last: &LiveSample| {
        format!(
            "per added live worker: {:.1} KiB RSS, {:.2} fds, {:.3} threads",
            per(last, first.rss, last.rss) * 1024.0,
            per(last, first.fds as f64, last.fds as f64),
            per(last, first.threads as f64, last.threads as f64),
        )
    };
    // Between 1,000 and 5,000 live: both past the 256 session files the
    // supervisor holds open at most, a constant, not a cost per worker.
    let fds_per = (most.fds as f64 - thousand.fds as f64) / (most.live - thousand.live) as f64;
    let threads_per = per(most, first.threads as f64, most.threads as f64);
    let machine_per = most.machine_rise / most.live as f64;
    let (soft, hard) = most.open_files;
    Ok(vec![
        Row::single(
            "scale.live_1000",
            "supervisor (subagent batch) peak RSS with 1,000 live workers",
            "MiB",
            thousand.peak,
        )
        .target(Target::AtMost(64.0))
        .note(format!(
            "{}; {}; every task ok, no worker or cgroup left after each batch",
            curve[..3].join("; "),
            slope(thousand)
        )),
        Row::single(
            "scale.live_5000",
            "supervisor (subagent batch -j 5000) peak RSS with 5,000 live workers",
            "MiB",
            most.peak,
        )
        .target(Target::AtMost(192.0))
        .note(format!(
            "{}; {}; supervisor CPU while all wait: {:.0} ms over {} s; every task ok, no worker or cgroup left after",
            curve[3],
            slope(most),
            most.idle_cpu_ms,
            HOLD_FOR_CPU.as_secs()
        )),
        Row::single(
            "scale.live_5000_fds",
            "supervisor fds per added live worker, 1,000 to 5,000 live",
            "fds",
            fds_per,
        )
        .target(Target::AtMost(3.0))
        .note(format!(
            "{} fds with 1,000 live, {} with 5,000; from 10 live: {:.3} a worker, the 256 session files held open at most included; open-files limit of the batch {soft} (hard {hard}): {}",
            thousand.fds,
            most.fds,
            per(most, first.fds as f64, most.fds as f64),
            if soft == hard { "raised to the hard limit" } else { "NOT raised to the hard limit" }
        )),
        Row::single(
            "scale.live_5000_threads",
            "supervisor threads per added live worker, 10 to 5,000 live",
            "threads",
            threads_per,
        )
        .target(Target::AtMost(0.001))
        .note(format!("{} threads with 10 live, {} with 5,000", first.threads, most.threads)),
        Row::single(
            "scale.live_5000_machine",
            "the machine's used memory per live worker (MemTotal - MemAvailable, before vs all live)",
            "MiB",
            machine_per,
        )
        .target(Target::AtMost(1.5))
        .note(format!("{:.0} MiB for 5,000 live workers, their cgroups and the supervisor", most.machine_rise)),
    ])
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
    isolate(&mut command, dir);
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
    isolate(&mut xargs, dir);
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
    let mut rows = live_workers(cx, dir.path())?;
    rows.push(batch_vs_xargs(cx, dir.path())?);
    Ok(rows)
}
