//! The `llama` group: the runtime's cost on a real turn. `subagent run`
//! (the whole CLI process) and `subagent batch -j 1` against the real
//! llama-server, each beside curl sending the very request the worker sends
//! (recorded once through a loopback server) to the same server.
//!
//! Generation is pinned (temperature 0, at most [`MAX_TOKENS`] tokens), so
//! both sides make the model do the same work.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Result, bail};

use crate::context::{BenchContext, isolate};
use crate::llama_server::LlamaServer;
use crate::loopback::Loopback;
use crate::report::{Row, Stats, Target};
use crate::timing::{ms, sample_n};

/// Tokens the model may generate per turn.
pub const MAX_TOKENS: &str = "16";

/// The task of every one-turn run.
pub const TASK: &str = "Say hello in five words.";

/// Tasks in the batch row.
const BATCH_TASKS: usize = 15;

/// `subagent run` for one turn against `base_url`, with no user config, its
/// sessions and workspace in `dir`.
pub fn cli_run(cx: &BenchContext, base_url: &str, dir: &Path) -> Result<Command> {
    let mut command = Command::new(cx.binary("subagent")?);
    command
        .arg("run")
        .args(provider_flags(base_url))
        .arg("--sessions-dir")
        .arg(dir.join("sessions"))
        .args(["--json", "--task", TASK]);
    isolate(&mut command, dir);
    Ok(command)
}

pub fn provider_flags(base_url: &str) -> Vec<String> {
    [
        "--provider",
        "openai-chat",
        "--base-url",
        base_url,
        "--model",
        "smollm2",
        "--temperature",
        "0",
        "--max-tokens",
        MAX_TOKENS,
        "--max-turns",
        "1",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// `subagent batch` of `tasks` into `results`, `jobs` at a time, against
/// `base_url`, with its sessions in `dir`.
pub fn batch(
    cx: &BenchContext,
    base_url: &str,
    tasks: &Path,
    results: &Path,
    jobs: usize,
    dir: &Path,
) -> Result<Command> {
    let mut command = Command::new(cx.binary("subagent")?);
    command
        .arg("batch")
        .arg(tasks)
        .arg("--results")
        .arg(results)
        .args(["-j", &jobs.to_string()])
        .args(provider_flags(base_url))
        .arg("--sessions-dir")
        .arg(dir.join("sessions"));
    isolate(&mut command, dir);
    Ok(command)
}

/// Runs `command`, failing on a non-zero exit; returns its wall time, ms.
pub fn timed(command: &mut Command) -> Result<f64> {
    let started = Instant::now();
    let status = command.status()?;
    let took = ms(started.elapsed());
    if !status.success() {
        bail!("{command:?} failed: {status}");
    }
    Ok(took)
}

/// The request body the worker sends for [`TASK`], recorded through a
/// loopback server; written to `dir/request.json`.
pub fn recorded_request(cx: &BenchContext, dir: &Path) -> Result<PathBuf> {
    let loopback = Loopback::start()?;
    timed(&mut cli_run(cx, &loopback.base_url(), dir)?)?;
    let path = dir.join("request.json");
    loopback.save_first_body(&path)?;
    Ok(path)
}

/// curl sending `body` to the server's chat endpoint, reading the stream.
pub fn curl(cx: &BenchContext, server: &LlamaServer, body: &Path) -> Result<Command> {
    let mut command = Command::new(cx.external("SUBAGENT_BENCH_CURL")?);
    command
        .args(["-sS", "-N", "--fail", "-o", "/dev/null"])
        .args(["-H", "content-type: application/json", "--data-binary"])
        .arg(format!("@{}", body.display()))
        .arg(format!("{}/chat/completions", server.base_url()))
        .stdin(Stdio::null());
    Ok(command)
}

pub fn run(cx: &BenchContext) -> Result<Vec<Row>> {
    let server = LlamaServer::start(cx)?;
    let dir = tempfile::tempdir()?;
    let body = recorded_request(cx, dir.path())?;
    let n = cx.iterations.clamp(5, 30);

    let curl_one = Row::timed(
        "llama.curl_one_turn",
        "baseline: curl, the worker's request, straight to llama-server (whole process)",
        "ms",
        &sample_n(n, 3, || timed(&mut curl(cx, &server, &body)?))?,
    );
    let cli_one = Row::timed(
        "llama.cli_one_turn",
        "subagent run, one turn (whole process: config, supervisor, sandboxed worker, session file)",
        "ms",
        &sample_n(n, 3, || {
            timed(&mut cli_run(cx, &server.base_url(), dir.path())?)
        })?,
    )
    .against_row(&curl_one);
    let over = cli_one.figure - curl_one.figure;
    let cli_one = cli_one.note(format!(
        "+{over:.1} ms over curl; where it goes: BENCHMARKS.md, \"One turn through the CLI\" (the CLI's own start, config, the worker's start, session fsyncs; the model's threads hold both cores, so every ms of our CPU delays the turn)"
    ));

    let tasks = dir.path().join("tasks.jsonl");
    let lines: String = (0..BATCH_TASKS)
        .map(|i| format!("{{\"id\":\"t{i}\",\"task\":\"{TASK}\"}}\n"))
        .collect();
    std::fs::write(&tasks, lines)?;
    // Seven rounds, each the batch then the same number of curls: the
    // llama-server turn wanders by several ms between rounds, more than
    // the +5 ms judged, and the median of three rounds followed it.
    let reps = 7;
    let mut per_task = Vec::with_capacity(reps);
    let mut curls = Vec::with_capacity(reps);
    for rep in 0..reps {
        let results = dir.path().join(format!("results-{rep}.jsonl"));
        let mut command = batch(cx, &server.base_url(), &tasks, &results, 1, dir.path())?;
        per_task.push(timed(&mut command)? / BATCH_TASKS as f64);
        let done = std::fs::read_to_string(&results)?.lines().count();
        if done != BATCH_TASKS {
            bail!("the batch wrote {done} results, expected {BATCH_TASKS}");
        }
        let started = Instant::now();
        for _ in 0..BATCH_TASKS {
            timed(&mut curl(cx, &server, &body)?)?;
        }
        curls.push(ms(started.elapsed()) / BATCH_TASKS as f64);
    }
    // Judged on each round's difference, batch against the curls right
    // after it on the same server: the medians of the two sides can come
    // from rounds apart, and the server's turn drifts between rounds by
    // more than the margin judged.
    let over: Vec<f64> = per_task.iter().zip(&curls).map(|(b, c)| b - c).collect();
    let rounds: Vec<String> = over.iter().map(|d| format!("{d:+.1}")).collect();
    let batch_row = Row::timed(
        "llama.batch15_per_task",
        "subagent batch -j 1 of 15 one-turn tasks, wall per task over 15 curl processes' wall per request (median of 7 alternating rounds' differences)",
        "ms",
        &over,
    )
    .target(Target::AtMost(5.0))
    .note(format!(
        "batch {:.1} ms a task, curl {:.1} ms a request (medians of the rounds); each round's difference, ms: {}",
        Stats::of(&per_task).median,
        Stats::of(&curls).median,
        rounds.join(", ")
    ));
    Ok(vec![curl_one, cli_one, batch_row])
}
