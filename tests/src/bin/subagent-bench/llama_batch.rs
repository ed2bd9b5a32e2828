//! The `llama` group's saturation row: `subagent batch -j N` against a
//! llama-server with N slots, beside N parallel curl loops sending the
//! worker's recorded request, in alternating rounds. Both sides keep every
//! slot busy; what differs is the CPU our runtime takes from the model's
//! two threads on a 2-core machine, which the row also reports (user plus
//! system CPU of `subagent batch` and all its workers, per task).

use std::path::Path;
use std::time::Instant;

use anyhow::{Result, bail};

use crate::context::BenchContext;
use crate::llama::{batch, curl, recorded_request, timed};
use crate::llama_server::LlamaServer;
use crate::report::{Row, Stats, Target};
use crate::timing::ms;

/// Slots of the server and `-j` of the batch.
const SLOTS: usize = 4;

/// Requests per side and round: enough that start and end (some slots
/// idle) are a small part of a round.
const TASKS: usize = 48;

/// Rounds, each the batch then the curl loops.
const ROUNDS: usize = 7;

/// CPU time (user + system) of this process's reaped children so far, ms.
fn children_cpu_ms() -> f64 {
    // SAFETY: rusage is plain data; zeroed is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into `usage`, which lives for the call.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let tv = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// `subagent batch -j SLOTS` of [`TASKS`] tasks: requests per second and
/// CPU per task (ms) of the batch and its workers.
fn batch_round(
    cx: &BenchContext,
    server: &LlamaServer,
    dir: &Path,
    round: usize,
) -> Result<(f64, f64)> {
    let tasks = dir.join("saturate-tasks.jsonl");
    if !tasks.exists() {
        let lines: String = (0..TASKS)
            .map(|i| format!("{{\"id\":\"t{i}\",\"task\":\"{}\"}}\n", crate::llama::TASK))
            .collect();
        std::fs::write(&tasks, lines)?;
    }
    let results = dir.join(format!("saturate-results-{round}.jsonl"));
    let mut command = batch(cx, &server.base_url(), &tasks, &results, SLOTS, dir)?;
    let cpu_before = children_cpu_ms();
    let took = timed(&mut command)?;
    let cpu = children_cpu_ms() - cpu_before;
    let done = std::fs::read_to_string(&results)?.lines().count();
    if done != TASKS {
        bail!("the saturating batch wrote {done} results, expected {TASKS}");
    }
    Ok((TASKS as f64 / (took / 1e3), cpu / TASKS as f64))
}

/// [`SLOTS`] threads, each running curl [`TASKS`]` / SLOTS` times in a row:
/// requests per second.
fn curl_round(cx: &BenchContext, server: &LlamaServer, body: &Path) -> Result<f64> {
    let started = Instant::now();
    std::thread::scope(|scope| {
        let loops: Vec<_> = (0..SLOTS)
            .map(|_| {
                scope.spawn(|| -> Result<()> {
                    for _ in 0..TASKS / SLOTS {
                        timed(&mut curl(cx, server, body)?)?;
                    }
                    Ok(())
                })
            })
            .collect();
        loops.into_iter().try_for_each(|l| {
            l.join()
                .map_err(|_| anyhow::anyhow!("a curl loop panicked"))?
        })
    })?;
    Ok(TASKS as f64 / (ms(started.elapsed()) / 1e3))
}

pub fn run(cx: &BenchContext) -> Result<Vec<Row>> {
    let server = LlamaServer::start_with_slots(cx, SLOTS)?;
    let dir = tempfile::tempdir()?;
    let body = recorded_request(cx, dir.path())?;
    // A warm-up of each side: the first requests fill the server's caches.
    curl_round(cx, &server, &body)?;
    let (mut ratios, mut batch_rps, mut curl_rps, mut cpu) = (vec![], vec![], vec![], vec![]);
    for round in 0..ROUNDS {
        let (ours, cpu_per_task) = batch_round(cx, &server, dir.path(), round)?;
        let theirs = curl_round(cx, &server, &body)?;
        ratios.push(ours / theirs);
        batch_rps.push(ours);
        curl_rps.push(theirs);
        cpu.push(cpu_per_task);
    }
    let ratio = Stats::of(&ratios);
    let row = Row::single(
        "llama.batch_saturated",
        "subagent batch -j 4 (48 one-turn tasks) against llama-server with 4 slots: its requests/s over 4 parallel curl loops' (median of 7 alternating rounds)",
        "x",
        ratio.median,
    )
    .target(Target::AtLeast(0.97))
    .note(format!(
        "batch {:.2} req/s, curl loops {:.2} req/s (medians); round ratios {:.3} to {:.3}; CPU of subagent batch and its workers {:.1} ms a task",
        Stats::of(&batch_rps).median,
        Stats::of(&curl_rps).median,
        ratio.min,
        ratio.max,
        Stats::of(&cpu).median
    ));
    Ok(vec![row])
}
