//! A cgroup v2 delegated to us with us inside it (a user's
//! `systemd-run --user --scope -p Delegate=yes subagent ...`, a container
//! whose cgroup namespace starts at its own cgroup, a worker in the cgroup
//! its supervisor made for it): deciding whether children's cgroups can be
//! made there, and moving this process into a leaf so they can.
//!
//! cgroup v2 hands a controller to child cgroups only from a cgroup that
//! holds no process of its own (the root excepted), so a process sitting in
//! its delegated cgroup cannot enable memory and pids for its children
//! until it moves itself into a leaf below it. [`place_v2`] decides, as a
//! pure function over [`CgroupFacts`]; [`adopt`] makes the move.
//!
//! It never moves a process but this one and its own descendants (which
//! would have been born in its leaf a moment later), never touches a cgroup
//! that holds other processes or that we cannot write, and never moves a
//! process out of the root cgroup, which hands controllers down with
//! processes inside (a root supervisor there keeps the existing path).

use std::fs;
use std::path::{Path, PathBuf};

use nix::unistd::{AccessFlags, access};

use super::kind::CgroupKind;
use super::members::listed_pids;

/// The few facts about cgroupfs the decision needs, so it can be tested on
/// samples without systemd.
pub(crate) trait CgroupFacts {
    /// The id of this process, as `cgroup.procs` lists it.
    fn pid(&self) -> u32;
    /// A cgroupfs file's text.
    fn read(&self, path: &Path) -> Result<String, String>;
    /// Whether the file or directory exists (`cgroup.type` exists in every
    /// cgroup but the root).
    fn exists(&self, path: &Path) -> bool;
    /// Whether we may write it; the error says why not.
    fn writable(&self, path: &Path) -> Result<(), String>;
    /// The parent of process `pid`; `None` when it cannot be read.
    fn parent_of(&self, pid: u32) -> Option<u32>;
}

/// The facts as the kernel gives them to this process.
pub(crate) struct KernelFacts;

impl CgroupFacts for KernelFacts {
    fn pid(&self) -> u32 {
        std::process::id()
    }

    fn read(&self, path: &Path) -> Result<String, String> {
        fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn writable(&self, path: &Path) -> Result<(), String> {
        access(path, AccessFlags::W_OK).map_err(|e| e.to_string())
    }

    fn parent_of(&self, pid: u32) -> Option<u32> {
        crate::procfs::stat(pid).map(|stat| stat.ppid)
    }
}

/// Longest chain of parents walked to find out whether a process is one of
/// ours: deeper than any probe's process tree.
const MAX_ANCESTRY: usize = 64;

/// Rounds of moving our own processes out of the delegated cgroup before
/// handing the controllers down gives up: a descendant forked between the
/// reading of `cgroup.procs` and the move is caught by the next round.
const ADOPT_ROUNDS: usize = 3;

/// Whether `pid` is `ancestor` or descends from it. A process whose parent
/// cannot be read (gone, or outside our pid namespace, listed as 0) counts
/// as not ours.
fn descends_from(pid: u32, ancestor: u32, facts: &impl CgroupFacts) -> bool {
    if pid == 0 {
        return false;
    }
    let mut current = pid;
    for _ in 0..MAX_ANCESTRY {
        if current == ancestor {
            return true;
        }
        match facts.parent_of(current) {
            Some(parent) if parent != 0 && parent != current => current = parent,
            _ => return false,
        }
    }
    false
}

/// The leaf this process moves into: named by our scheme, so the sweep of
/// stale cgroups recognises one whose process is gone.
pub(crate) fn leaf_name(pid: u32) -> String {
    format!("subagent-{pid}-self")
}

/// Whether per-child cgroups with memory and pids caps can be made under
/// our own v2 cgroup `dir`, and whether we must first move into a leaf.
pub(crate) fn place_v2(dir: PathBuf, facts: &impl CgroupFacts) -> Result<CgroupKind, String> {
    let controllers = facts.read(&dir.join("cgroup.controllers"))?;
    if !lists_memory_and_pids(&controllers) {
        return Err(format!(
            "cgroup v2 at {} does not offer the memory and pids controllers \
             (it offers: {}); run the supervisor in a cgroup with them delegated, \
             e.g. under `systemd-run --user --scope -p Delegate=yes`",
            dir.display(),
            controllers.trim()
        ));
    }
    facts.writable(&dir).map_err(|e| not_writable(&dir, &e))?;
    // The root cgroup may hold processes and still hand controllers down:
    // the children's cgroups go right there and nothing moves (a cgroup
    // namespace's root shows as `/` too, but has a `cgroup.type`).
    if !facts.exists(&dir.join("cgroup.type")) {
        return Ok(CgroupKind::V2 { dir, leaf: None });
    }
    let procs_file = dir.join("cgroup.procs");
    let pid = facts.pid();
    // Besides us, only our own processes (a probe the supervisor started a
    // moment before, such as the Python interpreter's) may be there: they
    // move with us.
    let others: Vec<String> = listed_pids(&facts.read(&procs_file)?)
        .into_iter()
        .filter(|p| !descends_from(*p, pid, facts))
        .map(|p| p.to_string())
        .collect();
    if !others.is_empty() {
        return Err(format!(
            "cgroup v2 at {} also holds processes that are not ours ({}): cgroup v2 \
             hands the memory and pids controllers to child cgroups only from a cgroup \
             without processes, and we move no process but ours; start subagent \
             itself in its own delegated scope, e.g. \
             `systemd-run --user --scope -p Delegate=yes subagent ...` (not a shell that \
             then runs it)",
            dir.display(),
            others.join(" ")
        ));
    }
    // Moving ourselves needs write access to `cgroup.procs` of the common
    // ancestor of both cgroups (ours); handing down, to our subtree_control.
    for file in [&procs_file, &dir.join("cgroup.subtree_control")] {
        facts.writable(file).map_err(|e| not_writable(file, &e))?;
    }
    let leaf = dir.join(leaf_name(pid));
    Ok(CgroupKind::V2 {
        dir,
        leaf: Some(leaf),
    })
}

/// Moves this process into `leaf` (made under `dir` if missing), and with
/// it any of its own descendants still in `dir` (a probe started a moment
/// before), then hands memory and pids down from `dir`, so children's
/// cgroups made in `dir` can be capped. A process left in the leaf when the
/// hand-down fails (a process not ours joined `dir` meanwhile) is still in
/// its delegated cgroup, which caps it as before.
pub(crate) fn adopt(dir: &Path, leaf: &Path, facts: &impl CgroupFacts) -> Result<(), String> {
    if let Err(e) = fs::create_dir(leaf)
        && e.kind() != std::io::ErrorKind::AlreadyExists
    {
        return Err(format!(
            "cannot make the leaf cgroup {} in our delegated cgroup ({e})",
            leaf.display()
        ));
    }
    let leaf_procs = leaf.join("cgroup.procs");
    let pid = facts.pid();
    fs::write(&leaf_procs, pid.to_string()).map_err(|e| {
        format!(
            "cannot move ourselves into the leaf cgroup {} ({e}); the delegated cgroup {} \
             then cannot hand memory and pids to children's cgroups",
            leaf.display(),
            dir.display()
        )
    })?;
    let mut handed_down = super::files::enable_v2_controllers(dir);
    for _ in 1..ADOPT_ROUNDS {
        if handed_down.is_ok() {
            break;
        }
        let ours = listed_pids(&facts.read(&dir.join("cgroup.procs"))?)
            .into_iter()
            .filter(|p| descends_from(*p, pid, facts));
        for descendant in ours {
            // One that exited meanwhile is simply no longer there.
            let _ = fs::write(&leaf_procs, descendant.to_string());
        }
        handed_down = super::files::enable_v2_controllers(dir);
    }
    handed_down
}

fn lists_memory_and_pids(text: &str) -> bool {
    let listed: Vec<&str> = text.split_whitespace().collect();
    listed.contains(&"memory") && listed.contains(&"pids")
}

fn not_writable(path: &Path, reason: &str) -> String {
    format!(
        "cgroup {} is not writable ({reason}); run the supervisor as a user who owns its \
         cgroup, e.g. under `systemd-run --user --scope -p Delegate=yes`",
        path.display()
    )
}

#[cfg(test)]
#[path = "delegate_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "delegate_kernel_tests.rs"]
mod kernel_tests;
