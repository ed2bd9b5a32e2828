//! One child's own cgroup: created under ours before the fork, capped, joined
//! by the child in its pre-exec hook, read for OOM and pids events after the
//! run, and removed once the tree is dead. On cgroup v1 it gets a freezer
//! cgroup too where the freezer hierarchy is mounted and writable, so its
//! members can be frozen while they are killed ([`super::members`]).
//!
//! It never moves any process but the child (which moves itself), and never
//! touches cgroups it did not create. Every entry point that reads or
//! writes cgroupfs runs off the caller's async runtime: on the blocking
//! pool through the cleanup ([`crate::reaper`]), or handed to
//! [`crate::chores`].

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::files::{
    REMOVE_RETRY_PAUSE, REMOVE_RETRY_WINDOW, counter, enable_v2_controllers, remove_leaves_first,
};
use super::kind::CgroupKind;
use super::members::{CgroupMembers, Freezer};
use crate::chores;
use crate::spec::ResourceLimits;
use crate::status::Protection;

/// Numbers the cgroups this process creates, so names never collide.
static NEXT_CHILD: AtomicU64 = AtomicU64::new(0);

/// Sweeps once per process the cgroups left behind by earlier supervisors.
static STALE_SWEEP: Once = Once::new();

/// The start of the name of every cgroup this process creates,
/// `subagent-<our pid>-`, so processes inside them can be recognised.
pub(crate) fn child_name_prefix() -> String {
    format!("subagent-{}-", std::process::id())
}

/// The layout of one child's cgroup directories.
#[derive(Debug, Clone)]
enum Layout {
    V1 {
        memory: PathBuf,
        pids: PathBuf,
        /// Only where the freezer hierarchy is mounted and writable.
        freezer: Option<PathBuf>,
    },
    V2 {
        dir: PathBuf,
    },
}

/// What the child's cgroup says happened, read before it is removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CgroupVerdict {
    /// The OOM killer killed something in the cgroup.
    pub(crate) oom_killed: bool,
    /// The memory (or memory+swap) limit was hit at least once.
    pub(crate) memory_limit_hit: bool,
    /// A fork failed because of the pids cap.
    pub(crate) pids_limit_hit: bool,
}

/// A per-child cgroup that this process created and will remove.
#[derive(Debug)]
pub(crate) struct ChildCgroup {
    layout: Layout,
    members: CgroupMembers,
    removed: bool,
}

/// A freshly created cgroup and which caps it got.
#[derive(Debug)]
pub(crate) struct CgroupSetup {
    pub(crate) cgroup: ChildCgroup,
    pub(crate) applied: Vec<Protection>,
    /// Caps that could not be written, with why.
    pub(crate) not_applied: Vec<(Protection, String)>,
}

impl ChildCgroup {
    /// Creates `<ours>/subagent-<pid>-<n>` and writes the requested caps.
    /// Caps that cannot be written are reported, not fatal; failing to create
    /// the directory at all is the error.
    pub(crate) fn create(
        kind: &CgroupKind,
        limits: &ResourceLimits,
    ) -> Result<CgroupSetup, String> {
        chores::assert_off_runtime("creating a cgroup");
        STALE_SWEEP.call_once(|| super::stale::sweep_stale(kind));
        if let CgroupKind::V2 { dir, .. } = kind {
            enable_v2_controllers(dir)?;
        }
        let name = format!(
            "{}{}",
            child_name_prefix(),
            NEXT_CHILD.fetch_add(1, Ordering::Relaxed)
        );
        let layout = match kind {
            CgroupKind::V1 {
                memory,
                pids,
                freezer,
            } => Layout::V1 {
                memory: memory.join(&name),
                pids: pids.join(&name),
                freezer: freezer.as_ref().map(|f| f.join(&name)),
            },
            CgroupKind::V2 { dir, .. } => Layout::V2 {
                dir: dir.join(&name),
            },
        };
        let mut cgroup = ChildCgroup {
            layout,
            members: CgroupMembers::new(Vec::new(), None, None),
            removed: false,
        };
        for dir in cgroup.dirs() {
            if let Err(e) = fs::create_dir(&dir) {
                if cgroup.is_freezer(&dir) {
                    // Without a freezer, members forked during a kill round
                    // wait for the next round and the pidfd checks still
                    // spare strangers: not worth refusing the caps over.
                    cgroup.drop_freezer();
                    continue;
                }
                let _ = cgroup.remove_once();
                return Err(format!(
                    "cannot create cgroup {} ({e}); check that the cgroup is writable",
                    dir.display()
                ));
            }
        }
        cgroup.members = cgroup.find_members();
        let mut setup = CgroupSetup {
            cgroup,
            applied: Vec::new(),
            not_applied: Vec::new(),
        };
        if let Some(bytes) = limits.memory_bytes {
            setup.apply_memory(bytes);
        }
        if let Some(pids) = limits.pids {
            setup.apply_pids(pids);
        }
        Ok(setup)
    }

    /// The `cgroup.procs` files the child writes "0" into to join.
    pub(crate) fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs().iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// What it takes to list and signal the members; no I/O.
    pub(crate) fn members(&self) -> CgroupMembers {
        self.members.clone()
    }

    /// The members' view of this cgroup: its directories, and how the
    /// kernel offers to kill (v2's `cgroup.kill`, 5.14 on) and freeze it.
    fn find_members(&self) -> CgroupMembers {
        let (kill, freezer) = match &self.layout {
            Layout::V1 { freezer, .. } => (
                None,
                freezer.as_ref().map(|dir| Freezer::V1 {
                    state: dir.join("freezer.state"),
                }),
            ),
            Layout::V2 { dir } => (
                Some(dir.join("cgroup.kill")).filter(|p| p.exists()),
                Some(dir.join("cgroup.freeze"))
                    .filter(|p| p.exists())
                    .map(|freeze| Freezer::V2 {
                        freeze,
                        events: dir.join("cgroup.events"),
                    }),
            ),
        };
        CgroupMembers::new(self.dirs(), kill, freezer)
    }

    fn is_freezer(&self, dir: &Path) -> bool {
        matches!(&self.layout, Layout::V1 { freezer: Some(f), .. } if f == dir)
    }

    fn drop_freezer(&mut self) {
        if let Layout::V1 { freezer, .. } = &mut self.layout {
            *freezer = None;
        }
    }

    /// What the cgroup's counters say about OOM kills and cap hits.
    pub(crate) fn verdict(&self) -> CgroupVerdict {
        chores::assert_off_runtime("reading a cgroup's counters");
        match &self.layout {
            Layout::V1 { memory, pids, .. } => CgroupVerdict {
                oom_killed: counter(&memory.join("memory.oom_control"), "oom_kill") > 0,
                // With memsw capped too, this kernel leaves both failcnts
                // at 0 when the cap is hit (seen on 6.18): a peak that
                // reached the limit says it as well.
                memory_limit_hit: number(&memory.join("memory.failcnt")) > 0
                    || number(&memory.join("memory.memsw.failcnt")) > 0
                    || peak_reached(memory, "memory.max_usage_in_bytes", "memory.limit_in_bytes")
                    || peak_reached(
                        memory,
                        "memory.memsw.max_usage_in_bytes",
                        "memory.memsw.limit_in_bytes",
                    ),
                pids_limit_hit: counter(&pids.join("pids.events"), "max") > 0,
            },
            Layout::V2 { dir } => {
                let events = dir.join("memory.events");
                CgroupVerdict {
                    oom_killed: counter(&events, "oom_kill") > 0
                        || counter(&events, "oom_group_kill") > 0,
                    memory_limit_hit: counter(&events, "max") > 0
                        || counter(&dir.join("memory.swap.events"), "max") > 0,
                    pids_limit_hit: counter(&dir.join("pids.events"), "max") > 0,
                }
            }
        }
    }

    /// Removes the cgroup, retrying while the kernel finishes tearing down
    /// its last members. Call only once the tree is dead.
    pub(crate) fn remove(&mut self) -> io::Result<()> {
        chores::assert_off_runtime("removing a cgroup");
        let deadline = Instant::now() + REMOVE_RETRY_WINDOW;
        loop {
            match self.remove_once() {
                Ok(()) => return Ok(()),
                Err(e) if Instant::now() < deadline && e.raw_os_error() == Some(libc::EBUSY) => {
                    std::thread::sleep(REMOVE_RETRY_PAUSE);
                }
                Err(e) => {
                    // Tried again, longer, as the program ends.
                    super::retry::leave_behind(self.dirs());
                    self.removed = true;
                    return Err(e);
                }
            }
        }
    }

    fn remove_once(&mut self) -> io::Result<()> {
        let result = remove_dirs(&self.dirs());
        if result.is_ok() {
            self.removed = true;
        }
        result
    }

    fn dirs(&self) -> Vec<PathBuf> {
        match &self.layout {
            Layout::V1 {
                memory,
                pids,
                freezer,
            } => v1_dirs(memory, pids, freezer.as_ref()),
            Layout::V2 { dir } => vec![dir.clone()],
        }
    }
}

/// Removes each cgroup directory (one per hierarchy), trying all of them.
fn remove_dirs(dirs: &[PathBuf]) -> io::Result<()> {
    let mut result = Ok(());
    for dir in dirs {
        if let Err(e) = remove_tree(dir) {
            result = Err(e);
        }
    }
    result
}

/// Removes a cgroup directory and, leaves first, the cgroups nested in it:
/// a worker makes one per tool process under its own, and one killed in the
/// middle of a tool call cannot remove it.
fn remove_tree(dir: &Path) -> io::Result<()> {
    remove_leaves_first(dir, &mut |dir| match fs::remove_dir(dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    })
}

impl Drop for ChildCgroup {
    /// A cgroup dropped before [`ChildCgroup::remove`] (a spawn that failed
    /// or was refused) is removed on the chores thread: a drop may happen on
    /// a runtime thread. One attempt: it has no members to wait for.
    fn drop(&mut self) {
        if !self.removed {
            let dirs = self.dirs();
            chores::run(move || {
                chores::assert_off_runtime("removing a dropped cgroup");
                let _ = remove_dirs(&dirs);
            });
        }
    }
}

impl CgroupSetup {
    fn apply_memory(&mut self, bytes: u64) {
        let (limit_file, swap_file, swap_value) = match &self.cgroup.layout {
            // v1 memsw is memory + swap together: the same value caps both.
            Layout::V1 { memory, .. } => (
                memory.join("memory.limit_in_bytes"),
                memory.join("memory.memsw.limit_in_bytes"),
                bytes.to_string(),
            ),
            // v2 swap.max is swap alone: 0 makes memory.max the total.
            Layout::V2 { dir } => (
                dir.join("memory.max"),
                dir.join("memory.swap.max"),
                "0".to_string(),
            ),
        };
        if let Err(reason) = write(&limit_file, &bytes.to_string()) {
            self.refuse(Protection::CgroupMemory, reason.clone());
            self.refuse(Protection::CgroupMemorySwap, reason);
            return;
        }
        self.applied.push(Protection::CgroupMemory);
        if !swap_file.exists() {
            self.refuse(
                Protection::CgroupMemorySwap,
                format!(
                    "{} is missing: the kernel does not account swap (boot with \
                     swapaccount=1, or run without swap)",
                    swap_file.display()
                ),
            );
            return;
        }
        match write(&swap_file, &swap_value) {
            Ok(()) => self.applied.push(Protection::CgroupMemorySwap),
            Err(reason) => self.refuse(Protection::CgroupMemorySwap, reason),
        }
    }

    fn apply_pids(&mut self, pids: u64) {
        if pids == 0 {
            self.refuse(
                Protection::CgroupPids,
                "a pids cap of 0 cannot be enforced: the child itself counts as one \
                 process; ask for at least 1"
                    .to_string(),
            );
            return;
        }
        let file = match &self.cgroup.layout {
            Layout::V1 { pids: dir, .. } | Layout::V2 { dir } => dir.join("pids.max"),
        };
        match write(&file, &pids.to_string()) {
            Ok(()) => self.applied.push(Protection::CgroupPids),
            Err(reason) => self.refuse(Protection::CgroupPids, reason),
        }
    }

    fn refuse(&mut self, protection: Protection, reason: String) {
        self.not_applied.push((protection, reason));
    }
}

/// The directories of a v1 cgroup: one per hierarchy (the freezer only
/// where the machine mounts one).
fn v1_dirs(memory: &Path, pids: &Path, freezer: Option<&PathBuf>) -> Vec<PathBuf> {
    let mut dirs = vec![memory.to_owned(), pids.to_owned()];
    dirs.extend(freezer.cloned());
    dirs
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    fs::write(path, value).map_err(|e| format!("cannot write {value} to {}: {e}", path.display()))
}

/// True when the peak in `dir`'s file `peak` reached the limit in `limit`
/// (v1 rounds the limit down to whole pages; the peak cannot pass it).
fn peak_reached(dir: &Path, peak: &str, limit: &str) -> bool {
    let limit = number(&dir.join(limit));
    limit > 0 && number(&dir.join(peak)) >= limit
}

/// A bare number file such as `memory.failcnt`; 0 when unreadable.
fn number(path: &Path) -> u64 {
    fs::read_to_string(path)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
#[path = "child_tests.rs"]
mod tests;
