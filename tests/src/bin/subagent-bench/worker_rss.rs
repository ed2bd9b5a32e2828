//! The worker's own peak resident set on a one-turn run: the real
//! `subagent-worker` under the supervisor, answering one task from a
//! loopback OpenAI Chat server that streams a short text turn.
//!
//! Read from `/proc/<worker>/status` (`VmHWM`, the peak since its exec),
//! polled while it runs: the result's `peakRssBytes` comes from `wait4`,
//! which folds in the memory the child had before its exec (the
//! supervisor's), so it cannot tell the worker's own figure.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Result, bail};
use subagent_supervisor::{Supervisor, SupervisorConfig, WorkerCommand};
use tokio_util::sync::CancellationToken;

use crate::context::BenchContext;
use crate::loopback::Loopback;
use crate::report::{Row, Target};

/// Pids of our children running `program`'s file name.
pub fn children_running(name: &str) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok())
                .collect::<Vec<_>>()
        })
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|comm| name.starts_with(comm.trim()))
        })
        .collect()
}

pub fn run(cx: &BenchContext, rt: &tokio::runtime::Runtime) -> Result<Vec<Row>> {
    let model = Loopback::start()?;
    let dir = tempfile::tempdir()?;
    let worker = WorkerCommand {
        program: cx.binary("subagent-worker")?,
        args: Vec::new(),
    };
    let supervisor = Supervisor::new(SupervisorConfig::new(worker, dir.path().join("sessions")));
    let request = model.request(dir.path());
    let mut peaks = Vec::new();
    for _ in 0..10 {
        let peak = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let poller = {
            let (peak, done) = (Arc::clone(&peak), Arc::clone(&done));
            std::thread::spawn(move || {
                // Polls until the run is over: the peak is a high-water
                // mark, so the last reading before the exit holds it.
                while !done.load(Ordering::SeqCst) {
                    for pid in children_running("subagent-worker") {
                        if let Some(bytes) = subagent_sandbox::peak_rss_since_exec(pid) {
                            peak.fetch_max(bytes, Ordering::SeqCst);
                        }
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
            })
        };
        let result = rt.block_on(supervisor.run(request.clone(), CancellationToken::new()));
        done.store(true, Ordering::SeqCst);
        let _ = poller.join();
        if let Some(e) = &result.details.error {
            bail!("the one-turn run failed: {}: {}", e.code, e.message);
        }
        peaks.push(peak.load(Ordering::SeqCst) as f64 / (1024.0 * 1024.0));
    }
    Ok(vec![
        Row::timed(
            "spawn.worker_peak_rss",
            "worker peak RSS (VmHWM) on a one-turn run, loopback model",
            "MiB",
            &peaks,
        )
        .target(Target::AtMost(6.0)),
    ])
}
