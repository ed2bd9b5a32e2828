//! One thread per child that waits for the leader to exit and, when asked
//! (or when the child's owner is dropped), cleans up the whole tree: kills
//! the leftovers, reaps, reads the cgroup's verdict, removes the cgroup.
//!
//! The leader is reaped last, here and only here: its zombie keeps the
//! process-group id reserved while the group is being killed. Should the
//! thread be impossible to start, the same cleanup runs on the chores thread.

use std::io;
use std::sync::mpsc;
use std::time::Instant;

use tokio::sync::oneshot;

use crate::cgroup::{CgroupVerdict, ChildCgroup};
use crate::chores;
use crate::kill::KillHandle;
use crate::leaks::{self, TreeScope};
use crate::procfs;
use crate::unix::{self, RawExit, Rusage};

/// Stack of a reaper thread, bytes: it only scans /proc and makes syscalls.
const REAPER_STACK_BYTES: usize = 256 * 1024;

/// The leader has exited (not yet reaped).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LeaderExit {
    /// The status as `waitid` saw it.
    pub(crate) raw: RawExit,
    /// When it was seen.
    pub(crate) at: Instant,
}

/// Ask the reaper to clean up now.
#[derive(Debug)]
pub(crate) struct CleanupRequest {
    /// Inodes of streams not at EOF: whoever holds them is a leftover.
    pub(crate) open_pipes: Vec<u64>,
    pub(crate) reply: oneshot::Sender<CleanupReport>,
}

/// What cleaning up found.
#[derive(Debug, Clone, Default)]
pub(crate) struct CleanupReport {
    /// The leader's status and usage from `wait4`, when it could be reaped.
    pub(crate) reaped: Option<(RawExit, Rusage)>,
    pub(crate) leaked: Vec<u32>,
    pub(crate) verdict: CgroupVerdict,
}

/// The async side's ends of the reaper's channels.
#[derive(Debug)]
pub(crate) struct ReaperLink {
    pub(crate) exited: oneshot::Receiver<LeaderExit>,
    /// Dropping this without sending also triggers the cleanup (drop guard).
    pub(crate) cleanup: mpsc::SyncSender<CleanupRequest>,
}

/// What the reaper thread owns: handed over only once it runs, so a thread
/// that cannot be started leaves it with the caller.
type Tree = (TreeScope, Option<ChildCgroup>, KillHandle);

/// Starts the reaper thread of one child. When the thread cannot be
/// started, the tree is killed, reaped and its cgroup removed on the chores
/// thread, and the error is returned.
pub(crate) fn start(
    scope: TreeScope,
    cgroup: Option<ChildCgroup>,
    killer: KillHandle,
) -> io::Result<ReaperLink> {
    let (exit_tx, exited) = oneshot::channel();
    // One message each way, so one slot each: an unbounded channel would
    // allocate a block of 31 slots per child, about 6 KiB for the tree
    // (held for the child's whole life, times 1,000 live children).
    let (cleanup, requests) = mpsc::sync_channel::<CleanupRequest>(1);
    let (hand_over, tree) = mpsc::sync_channel::<Tree>(1);
    let started = std::thread::Builder::new()
        .name(format!("subagent-reaper-{}", scope.leader))
        .stack_size(REAPER_STACK_BYTES)
        .spawn(move || {
            let Ok((mut scope, cgroup, killer)) = tree.recv() else {
                return;
            };
            // The leader's zombie keeps its stat until it is reaped here.
            scope.leader_start = procfs::stat(scope.leader).map_or(0, |s| s.start_ticks);
            let raw = unix::wait_exit_keep_zombie(scope.leader).unwrap_or(RawExit::Exited(-1));
            let _ = exit_tx.send(LeaderExit {
                raw,
                at: Instant::now(),
            });
            // Err = the owner was dropped: clean up all the same.
            let request = requests.recv().ok();
            let open_pipes = request
                .as_ref()
                .map_or_else(|| scope.pipe_inodes.clone(), |r| r.open_pipes.clone());
            let report = clean_up(&scope, &open_pipes, cgroup, &killer);
            if let Some(request) = request {
                let _ = request.reply.send(report);
            }
        });
    match started {
        Ok(_) => {
            // The receiver lives until the thread has it: this cannot fail.
            let _ = hand_over.send((scope, cgroup, killer));
            Ok(ReaperLink { exited, cleanup })
        }
        Err(e) => {
            chores::run(move || {
                let mut scope = scope;
                scope.leader_start = procfs::stat(scope.leader).map_or(0, |s| s.start_ticks);
                // SIGKILL first: the cleanup waits for the leader to exit.
                killer.kill_silently();
                clean_up(&scope, &scope.pipe_inodes, cgroup, &killer);
            });
            Err(e)
        }
    }
}

fn clean_up(
    scope: &TreeScope,
    open_pipes: &[u64],
    cgroup: Option<ChildCgroup>,
    killer: &KillHandle,
) -> CleanupReport {
    let members = cgroup.as_ref().map(ChildCgroup::members);
    let leaked = leaks::kill_leftovers(scope, open_pipes, members.as_ref());
    let verdict = cgroup
        .as_ref()
        .map(ChildCgroup::verdict)
        .unwrap_or_default();
    let reaped = killer.reap_leader(|| unix::reap_with_rusage(scope.leader).ok());
    leaks::unregister(scope.leader);
    if let Some(mut cgroup) = cgroup {
        // A cgroup that cannot be removed is left behind empty; it holds no
        // processes and costs nothing, so it is not worth failing the run.
        let _ = cgroup.remove();
    }
    CleanupReport {
        reaped,
        leaked,
        verdict,
    }
}
