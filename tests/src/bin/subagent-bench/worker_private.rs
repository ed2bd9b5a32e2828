//! The worker's own memory while it waits mid-turn: the pages a live
//! subagent costs the machine beyond what every worker shares.
//!
//! Eight real `subagent-worker`s under one in-process supervisor each send
//! their request to a held loopback model (it answers nobody until
//! released); once all eight requests have arrived, every worker is parked
//! in the middle of its turn, and each one's `Private_Dirty` is read from
//! `/proc/<worker>/smaps_rollup`. Private dirty pages are the ones no other
//! process shares and the kernel cannot drop: heap, stacks, relocated
//! data, the runtime's state. Peak RSS (`spawn.worker_peak_rss`) counts the
//! shared read-only pages of the binary and libc too, which a thousand
//! workers pay once.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use subagent_supervisor::{Supervisor, SupervisorConfig, WorkerCommand};
use tokio_util::sync::CancellationToken;

use crate::context::BenchContext;
use crate::loopback::Loopback;
use crate::report::{Row, Target};
use crate::worker_rss::children_running;

/// Workers alive at once in a round: the figure was taken with 8.
const LIVE: usize = 8;

/// Rounds, each with fresh workers and a fresh held model.
const ROUNDS: usize = 5;

/// The issue-23 target, in KiB.
const TARGET_KIB: f64 = 768.0;

/// Where one worker's private dirty pages are, in KiB: the worker binary's
/// own mappings (its relocated `.data.rel.ro` and `.data`), the heap, the
/// stacks, other anonymous memory and the shared libraries' data.
#[derive(Debug, Default, Clone, Copy)]
struct Breakdown {
    binary: f64,
    heap: f64,
    stack: f64,
    anon: f64,
    libs: f64,
}

impl Breakdown {
    /// Reads `/proc/<pid>/smaps`; `binary` is the worker's file name.
    fn of(pid: u32, binary: &str) -> Option<Self> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/smaps")).ok()?;
        let mut breakdown = Self::default();
        let mut mapping = "";
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("Private_Dirty:") {
                let kib: f64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
                *breakdown.part(mapping, binary) += kib;
                continue;
            }
            let mut fields = line.split_whitespace();
            // A mapping's header starts with its address range; its sixth
            // field, when there is one, names what is mapped.
            let is_header = fields.next().is_some_and(|range| {
                range.contains('-') && range.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
            });
            if is_header {
                mapping = fields.nth(4).unwrap_or("");
            }
        }
        Some(breakdown)
    }

    fn part(&mut self, mapping: &str, binary: &str) -> &mut f64 {
        match mapping {
            "[heap]" => &mut self.heap,
            m if m.starts_with("[stack") => &mut self.stack,
            m if m.ends_with(binary) => &mut self.binary,
            m if m.starts_with('/') => &mut self.libs,
            _ => &mut self.anon,
        }
    }
}

/// `Private_Dirty` of `pid`, in KiB, from its `smaps_rollup`.
pub fn private_dirty_kib(pid: u32) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix("Private_Dirty:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

pub fn run(cx: &BenchContext, rt: &tokio::runtime::Runtime) -> Result<Vec<Row>> {
    let dir = tempfile::tempdir()?;
    let program = cx.binary("subagent-worker")?;
    // A binary just written by the build has dirty pages in the page cache,
    // and smaps counts a dirty file page mapped by one process as its
    // Private_Dirty: write it back first so only the worker's own pages
    // count.
    std::fs::File::open(&program)
        .and_then(|file| file.sync_all())
        .with_context(|| format!("write back {}", program.display()))?;
    let worker = WorkerCommand {
        program,
        args: Vec::new(),
    };
    let supervisor = Arc::new(Supervisor::new(SupervisorConfig::new(
        worker,
        dir.path().join("sessions"),
    )));
    let mut samples = Vec::with_capacity(LIVE * ROUNDS);
    let mut breakdown = None;
    for _ in 0..ROUNDS {
        let (kib, one) = one_round(rt, &supervisor, dir.path())?;
        samples.extend(kib);
        breakdown = breakdown.or(one);
    }
    Ok(vec![
        Row::timed(
            "spawn.worker_private_dirty",
            "worker Private_Dirty (smaps_rollup), waiting mid-turn on a held loopback model, 8 live",
            "KiB",
            &samples,
        )
        .target(Target::AtMost(TARGET_KIB))
        .note_if(
            breakdown.is_some(),
            breakdown.map_or_else(String::new, |b| {
                format!(
                    "one worker, KiB: the binary's relocated data {:.0}, heap {:.0}, stacks {:.0}, other anonymous {:.0}, shared libraries {:.0}",
                    b.binary, b.heap, b.stack, b.anon, b.libs
                )
            }),
        ),
    ])
}

/// Starts `LIVE` runs against a fresh held model, reads each worker's
/// private pages once all of them wait on it, then lets them finish and
/// checks every run succeeded and no worker is left. Also returns where
/// the first worker's pages are.
fn one_round(
    rt: &tokio::runtime::Runtime,
    supervisor: &Arc<Supervisor>,
    workspace: &std::path::Path,
) -> Result<(Vec<f64>, Option<Breakdown>)> {
    let model = Loopback::start_held()?;
    let request = model.request(workspace);
    let runs: Vec<_> = (0..LIVE)
        .map(|_| {
            let (supervisor, request) = (Arc::clone(supervisor), request.clone());
            rt.spawn(async move { supervisor.run(request, CancellationToken::new()).await })
        })
        .collect();
    let all_waiting = model.wait_for_requests(LIVE, Duration::from_secs(60));
    // Read before the release: after it the workers finish their turn.
    let pids = children_running("subagent-worker");
    let kib: Vec<f64> = pids
        .iter()
        .filter_map(|&pid| private_dirty_kib(pid))
        .collect();
    let breakdown = pids
        .first()
        .and_then(|&pid| Breakdown::of(pid, "subagent-worker"));
    model.release();
    for run in runs {
        let result = rt.block_on(run).context("a run's task panicked")?;
        if let Some(e) = &result.details.error {
            bail!("a held run failed: {}: {}", e.code, e.message);
        }
    }
    if !all_waiting {
        bail!("not all {LIVE} workers reached the held model within 60 s");
    }
    if kib.len() != LIVE {
        bail!(
            "read the private pages of {} workers of {LIVE} (pids {pids:?}); smaps_rollup needs the \
             same user with ptrace rights over a non-dumpable worker: run as root",
            kib.len()
        );
    }
    let left = children_running("subagent-worker");
    if !left.is_empty() {
        bail!("workers left after the round: {left:?}");
    }
    Ok((kib, breakdown))
}
