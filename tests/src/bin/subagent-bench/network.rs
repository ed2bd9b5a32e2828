//! The tools' private network per run (issue 33), in the `spawn` group:
//! what a run with the network on pays over the same run without it, in
//! wall time and in CPU, on each installed stack.
//!
//! A round is a run's first tool call twice, interleaved so both see the
//! same machine: without the network (the tool sandbox's own empty network
//! namespace), then with it (the network started as a run's first
//! networked call starts it, the call joining it, the network stopped as
//! the run's end stops it: stack and holder killed and reaped). The
//! difference is what the run pays and waits for. CPU is this process's
//! (every thread) and its reaped children's (the holder, the stack, the
//! tool process); the kernel's cleanup of the dropped network namespace
//! runs later in a kernel worker, which no one waits for, and is not
//! counted here (BENCHMARKS.md gives its perf figure).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, bail};
use subagent_sandbox::net::{NetworkOptions, PrivateNetwork, StackKind};
use subagent_sandbox::{Isolation, ResourceLimits, SandboxSpec};

use crate::report::{Row, Target};
use crate::timing::ms;

/// Unrecorded rounds first.
const WARMUP: usize = 3;

/// CPU time (user + system) of this process and of its reaped children
/// so far, ms.
fn cpu_ms() -> f64 {
    let of = |who: libc::c_int| {
        // SAFETY: rusage is plain data; zeroed is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage writes into `usage`, which lives for the call.
        unsafe { libc::getrusage(who, &mut usage) };
        let tv = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
        tv(usage.ru_utime) + tv(usage.ru_stime)
    };
    of(libc::RUSAGE_SELF) + of(libc::RUSAGE_CHILDREN)
}

/// Wall and CPU of `work`, ms.
async fn measured(work: impl std::future::Future<Output = Result<()>>) -> Result<(f64, f64)> {
    let (cpu, started) = (cpu_ms(), Instant::now());
    work.await?;
    Ok((ms(started.elapsed()), cpu_ms() - cpu))
}

/// `/bin/true` in the tool sandbox (`isolation`), waited for.
async fn call(limits: ResourceLimits, cwd: &Path, isolation: Isolation) -> Result<()> {
    let mut spec = SandboxSpec::new("/bin/true", "/");
    spec.env = subagent_sandbox::allowlisted_env(subagent_sandbox::DEFAULT_ENV_ALLOWLIST);
    spec.limits = limits;
    spec.cwd = cwd.to_owned();
    spec.isolation = Some(isolation);
    let child = subagent_sandbox::spawn(spec).await?;
    let exit = child.wait().await;
    if !exit.termination.is_success() {
        bail!("sandboxed child failed: {:?}", exit.termination);
    }
    Ok(())
}

/// The rows: per stack installed, the first call without the network and
/// with it (wall, then CPU); the default stack's (slirp4netns when
/// installed) judged against the 10 ms per run.
pub fn per_run(
    rt: &tokio::runtime::Runtime,
    n: usize,
    limits: ResourceLimits,
    cwd: &Path,
    strict: &Isolation,
) -> Result<Vec<Row>> {
    let default_stack = subagent_sandbox::net::current_stack().ok().map(|s| s.kind);
    let mut rows = Vec::new();
    for (suffix, kind) in [("", StackKind::Slirp4netns), ("_pasta", StackKind::Pasta)] {
        let id = format!("spawn.tool_network_per_run{suffix}");
        let program = kind.program_name();
        let Ok(stack) =
            subagent_sandbox::net::find_stack(Some(std::ffi::OsStr::new(program)), None, false)
        else {
            eprintln!("{id}: skipped: no {program} here");
            continue;
        };
        let (mut off_wall, mut off_cpu, mut on_wall, mut on_cpu) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for round in 0..n + WARMUP {
            let off = rt.block_on(measured(call(limits, cwd, strict.clone())))?;
            let on = rt.block_on(measured(async {
                let network =
                    PrivateNetwork::start_on(stack.clone(), NetworkOptions::default()).await?;
                let mut isolation = strict.clone();
                isolation.network = true;
                isolation.private_network = Some(Arc::clone(&network));
                call(limits, cwd, isolation).await?;
                // The last handle: dropping it stops the network, inside
                // the measured time.
                if Arc::strong_count(&network) != 1 {
                    bail!("the private network is still held after the call");
                }
                drop(network);
                Ok(())
            }))?;
            if round >= WARMUP {
                off_wall.push(off.0);
                off_cpu.push(off.1);
                on_wall.push(on.0);
                on_cpu.push(on.1);
            }
        }
        let judged = default_stack == Some(kind);
        let target = |row: Row| {
            if judged {
                row.target(Target::OverBaselineAtMost(10.0))
            } else {
                row
            }
        };
        let off_wall = Row::timed(
            &format!("spawn.tool_first_call_no_network{suffix}"),
            "a run's first tool call, network off (the same rounds as the next row)",
            "ms",
            &off_wall,
        );
        let on_wall = target(
            Row::timed(
                &id,
                &format!(
                    "a run's first tool call, network on ({program}): the network started, the call joining it, the network stopped; over: what a run waits for"
                ),
                "ms",
                &on_wall,
            )
            .against_row(&off_wall),
        );
        let off_cpu = Row::timed(
            &format!("spawn.tool_first_call_no_network{suffix}_cpu"),
            "CPU of that call, network off: this process and its reaped children",
            "ms",
            &off_cpu,
        );
        let on_cpu = target(
            Row::timed(
                &format!("{id}_cpu"),
                &format!(
                    "CPU of that call, network on ({program}), incl. the holder and the stack; not the kernel's later namespace cleanup"
                ),
                "ms",
                &on_cpu,
            )
            .against_row(&off_cpu),
        );
        rows.extend([off_wall, on_wall, off_cpu, on_cpu]);
    }
    Ok(rows)
}
