//! After the leader exits: find the descendants it left behind, kill them,
//! reap the ones that are our children, and tell the caller who they were.
//!
//! Found through the child's cgroup when it has one, else through `/proc`:
//! members of the leader's process group, holders of our pipes, and orphans
//! reparented to us (we may be a subreaper) that came from another session
//! after the leader started. Reaping uses `waitpid` on those pids only, never
//! `waitpid(-1)`, which would steal other children's statuses.
//!
//! Every pid found this way is signalled only through [`crate::signal`]:
//! checked to still be the process the scan saw (same start time) after a
//! pidfd on it was taken, since by then the process may have exited and its
//! pid gone to a stranger.
//!
//! Limit of the `/proc` fallback: an orphan that left the process group,
//! closed its stdio and called setsid carries no mark of its tree. When two
//! cgroup-less trees run at once, such an orphan may be killed and reported
//! by whichever finishes first. With a cgroup, attribution is exact and the
//! orphan rule is off.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::cgroup::{self, CgroupMembers};
use crate::procfs::{self, ProcStat};
use crate::signal;
use crate::unix;

/// Most kill-and-rescan rounds: a round can reveal processes forked while
/// the previous one was dying.
const MAX_KILL_ROUNDS: usize = 16;

/// Longest time spent killing leftovers (s): a process stuck in
/// uninterruptible sleep must not hang the caller forever.
const LEFTOVER_KILL_WINDOW: Duration = Duration::from_secs(5);

/// Pause between checks that killed processes are gone (ms).
const SETTLE_POLL: Duration = Duration::from_millis(2);

/// What identifies one child's tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TreeScope {
    pub(crate) leader: u32,
    pub(crate) pgid: i32,
    /// The leader's start time in clock ticks; orphans older than this are
    /// not ours.
    pub(crate) leader_start: u64,
    /// Inodes of the child's stdout and stderr pipes.
    pub(crate) pipe_inodes: Vec<u64>,
}

/// Trees of this process that are still running, so one child's leak hunt
/// leaves the others' processes alone.
static LIVE_TREES: Mutex<BTreeMap<u32, TreeScope>> = Mutex::new(BTreeMap::new());

pub(crate) fn register(scope: &TreeScope) {
    live_trees().insert(scope.leader, scope.clone());
}

pub(crate) fn unregister(leader: u32) {
    live_trees().remove(&leader);
}

fn live_trees() -> std::sync::MutexGuard<'static, BTreeMap<u32, TreeScope>> {
    LIVE_TREES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a scan found.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Leftovers {
    /// Still running: to be killed and reported.
    pub(crate) alive: Vec<u32>,
    /// Already inside exit(2): to be waited for (and reaped if ours), not
    /// reported.
    pub(crate) dying: Vec<u32>,
    /// Already dead, our children: to be reaped, not reported.
    pub(crate) zombies: Vec<u32>,
}

/// Who we are, for telling our own children and session apart.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Observer {
    pub(crate) pid: u32,
    pub(crate) sid: i32,
}

/// Kills everything the leader left behind and returns the pids killed.
/// `open_pipes` are the inodes of streams that have not reached EOF.
pub(crate) fn kill_leftovers(
    scope: &TreeScope,
    open_pipes: &[u64],
    cgroup: Option<&CgroupMembers>,
) -> Vec<u32> {
    let me = Observer {
        pid: unix::own_pid(),
        sid: unix::own_session(),
    };
    if tree_already_gone(open_pipes, cgroup) {
        return Vec::new();
    }
    let deadline = Instant::now() + LEFTOVER_KILL_WINDOW;
    let mut leaked = BTreeSet::new();
    for _ in 0..MAX_KILL_ROUNDS {
        let table = procfs::process_table();
        let members = cgroup.map(CgroupMembers::list);
        let others: Vec<TreeScope> = live_trees()
            .values()
            .filter(|t| t.leader != scope.leader)
            .cloned()
            .collect();
        let probes = Probes {
            holds_pipe: &procfs::holds_pipe_for_writing,
            in_sandbox_cgroup: &|pid| {
                procfs::cgroups(pid).contains(&format!("/{}", cgroup::child_name_prefix()))
            },
        };
        let found = find_leftovers(
            scope,
            &table,
            me,
            members.as_deref(),
            &others,
            open_pipes,
            &probes,
        );
        for zombie in &found.zombies {
            unix::try_reap(*zombie);
        }
        let started = |pids: &[u32]| -> Vec<(u32, u64)> {
            pids.iter()
                .filter_map(|pid| table.iter().find(|p| p.pid == *pid))
                .map(|p| (p.pid, p.start_ticks))
                .collect()
        };
        if found.alive.is_empty() {
            if found.dying.is_empty() {
                break;
            }
            settle(&started(&found.dying), me, deadline);
            continue;
        }
        // The leader's unreaped zombie keeps the group id from reuse.
        unix::signal_group(scope.pgid, libc::SIGKILL);
        if let Some(cgroup) = cgroup {
            cgroup.signal_all(libc::SIGKILL);
        }
        let alive = started(&found.alive);
        for (pid, start) in &alive {
            signal::signal_if_same(*pid, *start, libc::SIGKILL);
            leaked.insert(*pid);
        }
        settle(&alive, me, deadline);
        if Instant::now() >= deadline {
            break;
        }
    }
    leaked.into_iter().collect()
}

/// True when the kernel's own count says nothing but the leader is left:
/// both pipes reached EOF (nobody holds a write end) and the cgroup's pids
/// controller charges one task at most, the leader's zombie, which is
/// reaped later. A task stays charged until it is reaped, so a descendant
/// that is still running, exiting, or a zombie reparented to us keeps the
/// full scan. The scan reads every `/proc/<pid>/stat` of the machine (0.6 ms
/// of a 2.5 ms sandboxed spawn of /bin/true here, BENCHMARKS.md) and finds
/// nothing more in this case: leaving the cgroup takes write access to
/// another cgroup's `cgroup.procs`, a privilege that also lets a process
/// shed every other mark of its tree (its group, its pipes).
fn tree_already_gone(open_pipes: &[u64], cgroup: Option<&CgroupMembers>) -> bool {
    open_pipes.is_empty()
        && cgroup
            .and_then(CgroupMembers::tasks_charged)
            .is_some_and(|charged| charged <= 1)
}

/// Waits until every process (pid, start time) is gone, a zombie that is
/// not ours, or its pid taken over by another process, reaping the ones
/// that are ours, until `deadline`.
fn settle(processes: &[(u32, u64)], me: Observer, deadline: Instant) {
    let mut pending: Vec<(u32, u64)> = processes.to_vec();
    while !pending.is_empty() && Instant::now() < deadline {
        pending.retain(|(pid, start)| match procfs::stat(*pid) {
            None => false,
            Some(p) if p.start_ticks != *start => false,
            Some(p) if p.ppid == me.pid => !(p.is_zombie() && unix::try_reap(*pid)),
            Some(p) => !p.is_zombie(),
        });
        if !pending.is_empty() {
            std::thread::sleep(SETTLE_POLL);
        }
    }
}

/// The checks of one process that need the live system; faked in tests.
pub(crate) struct Probes<'a> {
    /// Has the write end of one of these pipes open.
    pub(crate) holds_pipe: &'a dyn Fn(u32, &[u64]) -> bool,
    /// Lives in a cgroup that this process made for another child.
    pub(crate) in_sandbox_cgroup: &'a dyn Fn(u32) -> bool,
}

/// Picks this tree's leftovers from a process table; `cgroup` holds the
/// members of the tree's cgroup when it has one. Pure but for `probes`, so
/// the selection rule can be tested without processes.
pub(crate) fn find_leftovers(
    scope: &TreeScope,
    table: &[ProcStat],
    me: Observer,
    cgroup: Option<&[u32]>,
    others: &[TreeScope],
    open_pipes: &[u64],
    probes: &Probes<'_>,
) -> Leftovers {
    let holds_pipe = probes.holds_pipe;
    let excluded = |p: &ProcStat| {
        p.pid == me.pid || p.pid == scope.leader || others.iter().any(|o| o.leader == p.pid)
    };
    // With a cgroup, membership is exact; the orphan heuristic would only
    // risk claiming another tree's daemon.
    let has_cgroup = cgroup.is_some();
    let is_orphan_of_ours = |p: &ProcStat| {
        !has_cgroup
            && p.ppid == me.pid
            && p.sid != me.sid
            && p.start_ticks >= scope.leader_start
            && !others
                .iter()
                .any(|o| o.pgid == p.pgid || (!p.is_zombie() && holds_pipe(p.pid, &o.pipe_inodes)))
            && !(probes.in_sandbox_cgroup)(p.pid)
    };
    let mut ours: BTreeSet<u32> = table
        .iter()
        .filter(|p| !excluded(p))
        .filter(|p| {
            cgroup.is_some_and(|members| members.contains(&p.pid))
                || p.pgid == scope.pgid
                || (!p.is_zombie() && holds_pipe(p.pid, open_pipes))
                || is_orphan_of_ours(p)
        })
        .map(|p| p.pid)
        .collect();
    // Descendants of what we found are ours too.
    loop {
        let before = ours.len();
        for p in table {
            if ours.contains(&p.ppid) && !excluded(p) {
                ours.insert(p.pid);
            }
        }
        if ours.len() == before {
            break;
        }
    }
    let mut found = Leftovers::default();
    for p in table.iter().filter(|p| ours.contains(&p.pid)) {
        if p.is_zombie() {
            if p.ppid == me.pid {
                found.zombies.push(p.pid);
            }
        } else if p.exiting {
            found.dying.push(p.pid);
        } else {
            found.alive.push(p.pid);
        }
    }
    found
}

#[cfg(test)]
#[path = "leaks_tests.rs"]
mod tests;
