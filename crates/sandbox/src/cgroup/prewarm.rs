//! Paying the first cgroup migration's wait early, off a child's start.
//!
//! Every write to a `cgroup.procs` takes the kernel's global
//! `cgroup_threadgroup_rwsem` for writing. After a quiet moment that lock
//! first waits for an RCU grace period (measured here: 7 to 23 ms; the
//! writes that follow within about one grace period take 0.1 ms). A child
//! joins its cgroups in its pre-exec hook, so a supervisor that starts one
//! child after a pause (every one-shot `subagent run`) would wait that long
//! before the child even execs.
//!
//! [`prewarm_attach`] makes the same kind of write at once, moving this
//! process into the cgroup it is already in (the kernel skips tasks whose
//! cgroup does not change), on the chores thread, so the grace period runs
//! while the caller loads its configuration and the child's cgroup is
//! planned behind it on the same thread. Nothing about the children's
//! containment changes: they still join before they exec.
//!
//! A supervisor starting children back to back after short turns (a batch
//! at `-j 1`) would pay the wait at every child: the grace period passes
//! between two children. [`keep_warm`], called at each start, keeps the
//! lock out of its quiet state for [`KEEP_WARM_WINDOW`] after the last one:
//! a thread moves itself (one thread, through v1's `tasks`, so the move is
//! cheap) into the cgroup it is in, every [`KEEP_WARM_INTERVAL`], inside
//! a grace period. Measured: a batch of one-turn tasks at `-j 1`
//! went from +17 to +2 ms a task over curl (BENCHMARKS.md). It costs about
//! 0.05 ms of CPU per write while the window is open, nothing after.
//!
//! It never moves this process anywhere else: the target is read from
//! `/proc/self/cgroup` for the same hierarchy.

use std::fs;
use std::path::PathBuf;
use std::sync::{Condvar, Mutex, Once, PoisonError};
use std::time::{Duration, Instant};

use super::discover::cgroup_support_cached;
use super::kind::CgroupKind;
use crate::chores;

/// Starts a no-op migration of this process on the chores thread when
/// per-child cgroups are available; returns at once. Call it as early as a
/// child is known to be coming. Failures are ignored: the child's own join
/// then simply pays the wait, as it would have anyway.
pub fn prewarm_attach() {
    chores::run(|| {
        let Some(procs) = own_procs_file() else {
            return;
        };
        let _ = fs::write(procs, std::process::id().to_string());
    });
}

/// `cgroup.procs` of the cgroup this process is in, in the hierarchy its
/// children's cgroups are made in.
fn own_procs_file() -> Option<PathBuf> {
    let kind = cgroup_support_cached().ok()?;
    Some(kind.own_cgroup().join("cgroup.procs"))
}

/// How long after the last child's start the lock is kept warm.
pub(crate) const KEEP_WARM_WINDOW: Duration = Duration::from_secs(1);

/// Pause between two keep-warm moves: under the shortest grace period
/// seen here (7 ms). Each move costs about 0.05 ms of CPU, and a batch at
/// `-j 1` keeps the window open for its whole life, beside a model server
/// that wants both cores: at 3 ms the keeper took 2.5 ms of CPU a task of
/// a one-turn batch (`perf record`, 23 % of the batch's CPU); at 5 ms
/// about 1.5, and the lock stays warm (A/B of `batch -j 1` against
/// llama-server, 14 alternating rounds: +5.2 ms a task over curl at 3 ms,
/// +3.6 at 5, medians).
pub(crate) const KEEP_WARM_INTERVAL: Duration = Duration::from_millis(5);

struct KeepWarm {
    state: Mutex<Warmth>,
    wake: Condvar,
}

/// When the last child started (its cgroup joins warmed the lock) and until
/// when to keep it warm.
#[derive(Clone, Copy)]
struct Warmth {
    last_start: Option<Instant>,
    until: Option<Instant>,
}

static KEEP_WARM: KeepWarm = KeepWarm {
    state: Mutex::new(Warmth {
        last_start: None,
        until: None,
    }),
    wake: Condvar::new(),
};

static KEEPER: Once = Once::new();

/// Keeps the migration lock warm until [`KEEP_WARM_WINDOW`] from now;
/// starts the keeper thread on first use. Cheap: a lock and a notify.
pub(crate) fn keep_warm() {
    let now = Instant::now();
    *KEEP_WARM
        .state
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = Warmth {
        last_start: Some(now),
        until: Some(now + KEEP_WARM_WINDOW),
    };
    KEEP_WARM.wake.notify_one();
    KEEPER.call_once(|| {
        let Some(target) = own_tasks_file() else {
            return;
        };
        // Without the thread the children still start, paying the wait.
        let _ = std::thread::Builder::new()
            .name("cgroup-keep-warm".into())
            .stack_size(64 * 1024)
            .spawn(move || keeper(&target));
    });
}

/// The keeper: while the window is open, moves itself into its own cgroup
/// whenever neither a child's start nor its own last move happened within
/// the interval (children started back to back keep the lock warm
/// themselves, and a move would only hold up their forks); otherwise it
/// sleeps until the next start.
fn keeper(target: &std::path::Path) {
    let tid = crate::unix::own_tid().to_string();
    let mut last_move: Option<Instant> = None;
    loop {
        let due = {
            let mut state = KEEP_WARM
                .state
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            while state.until.is_none_or(|t| Instant::now() >= t) {
                state.until = None;
                state = KEEP_WARM
                    .wake
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            [state.last_start, last_move]
                .into_iter()
                .flatten()
                .max()
                .map(|latest| latest + KEEP_WARM_INTERVAL)
        };
        if let Some(due) = due
            && due > Instant::now()
        {
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            continue;
        }
        let _ = fs::write(target, &tid);
        last_move = Some(Instant::now());
    }
}

/// v1: `tasks` of our memory cgroup (one thread moves); v2: `cgroup.procs`.
fn own_tasks_file() -> Option<PathBuf> {
    match cgroup_support_cached().ok()? {
        CgroupKind::V1 { memory, .. } => Some(memory.join("tasks")),
        kind @ CgroupKind::V2 { .. } => Some(kind.own_cgroup().join("cgroup.procs")),
    }
}
