//! What hostile workers sending maximal frames cost the supervisor's memory,
//! through the real `subagent` binary: one worker's maximal frame about
//! once its size, and a hundred such workers at once no more than the
//! supervisor-wide in-flight frame budget, with every run still ending in a
//! valid result and nothing left running.
//!
//! Peak RSS is the supervisor's `VmHWM`, sampled until it exits; the
//! fixture's `big-frames-N` task sends N text deltas of the default frame
//! cap each. The constant of each bound is the peak of a plain run of the
//! same binary, measured in the same test, plus [`SLACK`].

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use subagent_protocol::frame::DEFAULT_MAX_PAYLOAD;

use super::batch_cmd::{BatchDir, assert_workers_gone, stderr};
use super::support::*;

const MIB: u64 = 1024 * 1024;

/// What the supervisor may allocate past a plain run's peak besides the
/// frames themselves: the runtime's per-worker tasks, buffers and session
/// writers (a hundred workers' worth).
const SLACK: u64 = 24 * MIB;

/// The same for one worker: its tasks and buffers, a few MiB at most.
const ONE_WORKER_SLACK: u64 = 4 * MIB;

/// The supervisor-wide frame budget the supervisor promises (see
/// `FRAME_BUDGET_BYTES` in the supervisor's link module).
const BUDGET: u64 = 256 * MIB;

/// Runs `command` to its end, sampling its peak RSS (`VmHWM`, bytes) while
/// it lives; returns its output and the last peak read.
fn run_sampling_peak(mut command: Command) -> (std::process::Output, u64) {
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let sampler = subagent_tests::sample_peak_rss(child.id());
    let out = child.wait_with_output().unwrap();
    (out, sampler.join().unwrap())
}

/// `subagent run` of the fixture task `task` in `dir`; returns the result
/// JSON and the supervisor's peak RSS.
fn run_task(dir: &Path, task: &str) -> (Value, u64) {
    let mut c = fixture_cli(&dir.join("sessions"));
    c.args(["--json", "--task", task, "--workspace"])
        .arg(dir.join("ws"));
    let (out, peak) = run_sampling_peak(c);
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("result is not JSON ({e}): {}", stderr(&out)));
    (json, peak)
}

fn mib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / MIB as f64)
}

#[test]
fn one_worker_sending_maximal_frames_costs_the_supervisor_about_one_frame() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("ws")).unwrap();
    let (plain, base) = run_task(tmp.path(), "fixture:success");
    assert_eq!(
        plain["content"][0]["text"], "fixture done: fixture:success",
        "{plain:#}"
    );
    let (json, peak) = run_task(tmp.path(), "fixture:big-frames-3");
    assert_valid_result(&json);
    assert_eq!(json["content"][0]["text"], "sent 3 big frames", "{json:#}");
    assert_children_reaped(&json);
    assert_nothing_runs_in(&tmp.path().join("ws"));

    let cap = u64::from(DEFAULT_MAX_PAYLOAD);
    let bound = base + cap * 6 / 5 + ONE_WORKER_SLACK;
    eprintln!(
        "frame_memory: one worker, 3 frames of {} MiB: peak {} MiB, plain run {} MiB, bound {} MiB",
        mib(cap),
        mib(peak),
        mib(base),
        mib(bound)
    );
    assert!(
        peak <= bound,
        "peak RSS {} MiB passes {} MiB (plain run {} MiB + 1.2 x the {} MiB cap + slack)",
        mib(peak),
        mib(bound),
        mib(base),
        mib(cap)
    );
}

/// A batch stopped with SIGTERM when dropped before it ended.
struct StopOnDrop(std::process::Child);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let pid = libc::pid_t::try_from(self.0.id()).unwrap();
            // SAFETY: kill takes plain integers; the pid is our unreaped child.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let _ = self.0.wait();
        }
    }
}

/// What the supervisor logs (at debug level) when a frame waits for room in
/// the frame budget.
const WAITS_LOG: &str = "a frame waits for room in the supervisor-wide frame budget";

/// Starts `batch` with the supervisor's debug log on, counting the frames
/// that wait for the frame budget as it logs them; returns the batch, the
/// count, and the thread that collects the whole log.
fn spawn_counting_waits(
    mut batch: Command,
) -> (
    StopOnDrop,
    Arc<AtomicUsize>,
    std::thread::JoinHandle<String>,
) {
    batch.env("RUST_LOG", "subagent_supervisor=debug");
    let child = batch
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Stopped (SIGTERM: it ends its workers) if an assertion fails first.
    let mut child = StopOnDrop(child);
    let waits = Arc::new(AtomicUsize::new(0));
    let log = {
        let waits = Arc::clone(&waits);
        let err = child.0.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut text = String::new();
            for line in BufReader::new(err).lines() {
                let line = line.unwrap();
                if line.contains(WAITS_LOG) {
                    waits.fetch_add(1, Ordering::Relaxed);
                }
                text.push_str(&line);
                text.push('\n');
            }
            text
        })
    };
    (child, waits, log)
}

/// How many `held-frames-N` workers of `dir` have all but the last byte of
/// their first frame sent.
fn held_frames(dir: &BatchDir) -> usize {
    subagent_tests::held_frames(&dir.workspace()).unwrap()
}

#[test]
fn a_hundred_hostile_workers_stay_within_the_frame_budget() {
    const WORKERS: usize = 100;
    // The same batch of plain tasks first: the constant of the bound.
    let plain_dir = BatchDir::new();
    let plain: Vec<String> = (0..WORKERS)
        .map(|n| format!(r#"{{"id":"p{n:03}","task":"fixture:success"}}"#))
        .collect();
    plain_dir.write_tasks(&plain);
    let (out, base) = run_sampling_peak(plain_dir.batch(
        "results.jsonl",
        &[
            "-j",
            "100",
            "--max-concurrent",
            "100",
            "--isolation",
            "none",
        ],
    ));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_workers_gone(&plain_dir);

    // Every worker sends all of its first maximal frame but one byte and
    // holds it until each worker either did so or has its frame waiting for
    // the budget: the most frames hostile workers can have in flight at once.
    let dir = BatchDir::new();
    let tasks: Vec<String> = (0..WORKERS)
        .map(|n| format!(r#"{{"id":"w{n:03}","task":"fixture:held-frames-2"}}"#))
        .collect();
    dir.write_tasks(&tasks);
    // The fixture workers report through files in the workspace: in place.
    let batch = dir.batch(
        "results.jsonl",
        &[
            "-j",
            "100",
            "--max-concurrent",
            "100",
            "--isolation",
            "none",
        ],
    );
    let (mut child, waits, log) = spawn_counting_waits(batch);
    let sampler = subagent_tests::sample_peak_rss(child.0.id());
    let held = || held_frames(&dir);
    wait_until(
        "every worker's frame in flight or waiting for the budget",
        || held() + waits.load(Ordering::Relaxed) >= WORKERS,
    );
    let (in_flight, waiting) = (held(), waits.load(Ordering::Relaxed));
    std::fs::write(dir.workspace().join(subagent_tests::RELEASE_FILE), b"").unwrap();
    let status = child.0.wait().unwrap();
    let peak = sampler.join().unwrap();
    let err = log.join().unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    let results = dir.results("results.jsonl");
    assert_eq!(results.len(), WORKERS, "{err}");
    for r in &results {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["output"], "sent 2 big frames", "{r}");
        assert_reaped(&check_session_file(Path::new(
            r["sessionFile"].as_str().unwrap(),
        )));
    }
    assert_workers_gone(&dir);

    // Each run keeps up to 1 MiB of its turn's text (the partial text of
    // the run's record), whatever its frames.
    let bound = base + BUDGET + WORKERS as u64 * MIB + SLACK;
    eprintln!(
        "frame_memory: {WORKERS} workers, 2 frames of {} MiB each, {in_flight} held in flight and {waiting} waiting: peak {} MiB, plain batch {} MiB, bound {} MiB",
        mib(u64::from(DEFAULT_MAX_PAYLOAD)),
        mib(peak),
        mib(base),
        mib(bound)
    );
    assert!(
        peak <= bound,
        "peak RSS {} MiB passes {} MiB (plain batch {} MiB + the {} MiB budget + 1 MiB a worker + slack)",
        mib(peak),
        mib(bound),
        mib(base),
        mib(BUDGET)
    );
}

/// More hostile workers than the budget holds maximal frames of: 15 fit
/// in the 256 MiB budget, so 5 wait on their sockets.
const BUDGET_FILLERS: usize = 20;

#[test]
fn small_frames_pass_while_hostile_workers_hold_the_frame_budget() {
    // Hostile workers first in the file, so they are started first; the
    // good one sends nothing until the test says so.
    let dir = BatchDir::new();
    let mut tasks: Vec<String> = (0..BUDGET_FILLERS)
        .map(|n| format!(r#"{{"id":"w{n:03}","task":"fixture:held-frames-1"}}"#))
        .collect();
    tasks.push(r#"{"id":"good","task":"fixture:gated-frames-200"}"#.to_owned());
    dir.write_tasks(&tasks);
    let jobs = (BUDGET_FILLERS + 1).to_string();
    // The fixture workers report through files in the workspace: in place.
    let batch = dir.batch(
        "results.jsonl",
        &[
            "-j",
            &jobs,
            "--max-concurrent",
            &jobs,
            "--isolation",
            "none",
        ],
    );
    let (mut child, waits, log) = spawn_counting_waits(batch);
    wait_until(
        "every hostile worker's frame in flight or waiting for the budget",
        || held_frames(&dir) + waits.load(Ordering::Relaxed) >= BUDGET_FILLERS,
    );
    let (in_flight, waiting) = (held_frames(&dir), waits.load(Ordering::Relaxed));
    assert!(
        waiting > 0,
        "the budget should be full, with frames waiting ({in_flight} in flight)"
    );

    // Every byte of the budget is held by frames that will not end before
    // the release: the good worker's 200 small frames must still pass,
    // long before any idle timeout (180 s) could end the hostile runs.
    let go = std::time::Instant::now();
    std::fs::write(dir.workspace().join(subagent_tests::GO_FILE), b"").unwrap();
    let good = || {
        dir.results("results.jsonl")
            .into_iter()
            .find(|r| r["id"] == "good")
    };
    wait_until("the good worker's result while the budget is held", || {
        good().is_some()
    });
    let took = go.elapsed();
    let good = good().unwrap();
    assert_eq!(good["status"], "ok", "{good}");
    assert_eq!(good["output"], "sent 200 small frames", "{good}");
    eprintln!(
        "frame_memory: {in_flight} maximal frames held and {waiting} waiting; 200 small frames and a result took {took:?}"
    );

    std::fs::write(dir.workspace().join(subagent_tests::RELEASE_FILE), b"").unwrap();
    let status = child.0.wait().unwrap();
    let err = log.join().unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    let results = dir.results("results.jsonl");
    assert_eq!(results.len(), BUDGET_FILLERS + 1, "{err}");
    for r in &results {
        assert_eq!(r["status"], "ok", "{r}");
        assert_reaped(&check_session_file(Path::new(
            r["sessionFile"].as_str().unwrap(),
        )));
    }
    assert_workers_gone(&dir);
}
