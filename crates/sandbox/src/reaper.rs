//! Cleaning up a child's whole tree once its leader has exited: kill the
//! leftovers, read the cgroup's verdict, reap the leader, remove the
//! placeholders its filesystem view made and the cgroup, then run the
//! caller's [`crate::AfterExit`].
//!
//! The leader is reaped last, here and only here: its zombie keeps the
//! process-group id reserved while the group is being killed. The work
//! blocks (it scans /proc, writes cgroupfs, waits for killed processes to
//! go), so it runs on the runtime's blocking pool, at most
//! [`CLEANUP_THREADS`] at a time: thousands of workers ending together must
//! not become thousands of threads. No thread waits for a leader while it
//! runs ([`crate::exit_watch`] does that on the runtime); only a child
//! dropped before its wait finished gets one ([`clean_up_abandoned`]), to
//! see it through without its owner.

use std::io;

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::task::JoinHandle;

use crate::cgroup::{CgroupVerdict, ChildCgroup};
use crate::chores;
use crate::kill::KillHandle;
use crate::leaks::{self, TreeScope};
use crate::placeholders::Placeholders;
use crate::procfs;
use crate::spec::AfterExit;
use crate::unix::{self, RawExit, Rusage};

/// Stack of a thread that cleans up an abandoned child, bytes: it only
/// scans /proc and makes syscalls.
const CLEANUP_STACK_BYTES: usize = 256 * 1024;

/// Cleanups running at once on the blocking pool. Each is a few syscalls
/// unless a leftover takes its time to die; four keep one slow tree from
/// holding up the rest while bounding the threads a burst of exits starts.
pub(crate) const CLEANUP_THREADS: usize = 4;

static CLEANUP_SLOTS: Semaphore = Semaphore::const_new(CLEANUP_THREADS);

/// What cleaning up found.
#[derive(Debug, Clone, Default)]
pub(crate) struct CleanupReport {
    /// The leader's status and usage from `wait4`, when it could be reaped.
    pub(crate) reaped: Option<(RawExit, Rusage)>,
    pub(crate) leaked: Vec<u32>,
    pub(crate) verdict: CgroupVerdict,
}

/// What the cleanup owns: one child's tree.
#[derive(Debug)]
pub(crate) struct Tree {
    pub(crate) scope: TreeScope,
    pub(crate) cgroup: Option<ChildCgroup>,
    pub(crate) killer: KillHandle,
    /// What the filesystem view made on the host; removed once the tree
    /// is dead, its mount namespace with it.
    pub(crate) placeholders: Placeholders,
    /// The caller's work for then, run last.
    pub(crate) after_exit: Option<AfterExit>,
}

/// Room for one cleanup on the blocking pool; wait for it before taking
/// the tree from its guard, so a wait dropped meanwhile leaves the tree to
/// the guard.
pub(crate) async fn cleanup_slot() -> Option<SemaphorePermit<'static>> {
    // The semaphore is never closed; a failed acquire cannot happen, and
    // would only mean running without a slot.
    CLEANUP_SLOTS.acquire().await.ok()
}

/// Starts cleaning up `tree`, whose leader has exited, on the blocking pool
/// at once; the cleanup runs to its end whether or not the handle is
/// awaited. `open_pipes`: inodes of streams not at EOF, whose holders are
/// leftovers.
pub(crate) fn start_cleanup(
    tree: Tree,
    open_pipes: Vec<u64>,
    slot: Option<SemaphorePermit<'static>>,
) -> JoinHandle<CleanupReport> {
    let mut handed = Handed(Some(tree));
    tokio::task::spawn_blocking(move || {
        let _slot = slot;
        match handed.0.take() {
            Some(tree) => chores::as_blocking_work(|| clean_up(tree, &open_pipes)),
            None => CleanupReport::default(),
        }
    })
}

/// A tree on its way to the blocking pool. A runtime that shuts down drops
/// the closures it has not started; the tree then goes to
/// [`clean_up_abandoned`] instead of being lost with its leader's zombie,
/// its leftovers and its cgroup.
struct Handed(Option<Tree>);

impl Drop for Handed {
    fn drop(&mut self) {
        if let Some(tree) = self.0.take() {
            let _ = clean_up_abandoned(tree);
        }
    }
}

/// Sees a child dropped before its wait finished through to its end, on a
/// thread of its own: its leader was just SIGKILLed, and nobody may wait on
/// it on a runtime that may be shutting down. Should no thread start, the
/// cleanup runs on the chores thread.
pub(crate) fn clean_up_abandoned(tree: Tree) -> io::Result<()> {
    let (hand_over, handed) = std::sync::mpsc::sync_channel::<Tree>(1);
    let started = std::thread::Builder::new()
        .name(format!("subagent-reaper-{}", tree.scope.leader))
        .stack_size(CLEANUP_STACK_BYTES)
        .spawn(move || {
            if let Ok(tree) = handed.recv() {
                let _ = unix::wait_exit_keep_zombie(tree.scope.leader);
                let pipes = tree.scope.pipe_inodes.clone();
                clean_up(tree, &pipes);
            }
        });
    match started {
        Ok(_) => {
            // The receiver lives until the thread has it: this cannot fail.
            let _ = hand_over.send(tree);
            Ok(())
        }
        Err(e) => {
            chores::run(move || {
                // SIGKILL again: the cleanup waits for the leader to exit.
                tree.killer.kill_silently();
                let pipes = tree.scope.pipe_inodes.clone();
                clean_up(tree, &pipes);
            });
            Err(e)
        }
    }
}

fn clean_up(tree: Tree, open_pipes: &[u64]) -> CleanupReport {
    let Tree {
        mut scope,
        cgroup,
        killer,
        placeholders,
        after_exit,
    } = tree;
    // The leader's zombie keeps its stat until it is reaped below.
    scope.leader_start = procfs::stat(scope.leader).map_or(0, |s| s.start_ticks);
    let members = cgroup.as_ref().map(ChildCgroup::members);
    let leaked = leaks::kill_leftovers(&scope, open_pipes, members.as_ref());
    let verdict = cgroup
        .as_ref()
        .map(ChildCgroup::verdict)
        .unwrap_or_default();
    let reaped = killer.reap_leader(|| unix::reap_with_rusage(scope.leader).ok());
    leaks::unregister(scope.leader);
    placeholders.remove();
    if let Some(mut cgroup) = cgroup {
        // A cgroup that cannot be removed is left behind empty; it holds no
        // processes and costs nothing, so it is not worth failing the run.
        let _ = cgroup.remove();
    }
    if let Some(work) = after_exit {
        work.run();
    }
    CleanupReport {
        reaped,
        leaked,
        verdict,
    }
}
