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
//! It never moves a process but this one, never touches a cgroup that holds
//! other processes or that we cannot write, and never moves a process out
//! of the root cgroup, which hands controllers down with processes inside
//! (a root supervisor there keeps the existing path).

use std::fs;
use std::path::{Path, PathBuf};

use nix::unistd::{AccessFlags, access};

use super::discover::CgroupKind;

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
    let procs: Vec<u32> = facts
        .read(&procs_file)?
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    let pid = facts.pid();
    let others: Vec<String> = procs
        .iter()
        .filter(|p| **p != pid)
        .map(u32::to_string)
        .collect();
    if !others.is_empty() {
        return Err(format!(
            "cgroup v2 at {} also holds processes that are not ours ({}): cgroup v2 \
             hands the memory and pids controllers to child cgroups only from a cgroup \
             without processes, and we move no process but ourselves; start subagent \
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

/// Moves this process into `leaf` (made under `dir` if missing) and hands
/// memory and pids down from `dir`, so children's cgroups made in `dir` can
/// be capped. A process left in the leaf when the hand-down fails (another
/// process joined `dir` meanwhile) is still in its delegated cgroup, which
/// caps it as before.
pub(crate) fn adopt(dir: &Path, leaf: &Path) -> Result<(), String> {
    if let Err(e) = fs::create_dir(leaf)
        && e.kind() != std::io::ErrorKind::AlreadyExists
    {
        return Err(format!(
            "cannot make the leaf cgroup {} in our delegated cgroup ({e})",
            leaf.display()
        ));
    }
    let procs = leaf.join("cgroup.procs");
    fs::write(&procs, std::process::id().to_string()).map_err(|e| {
        format!(
            "cannot move ourselves into the leaf cgroup {} ({e}); the delegated cgroup {} \
             then cannot hand memory and pids to children's cgroups",
            leaf.display(),
            dir.display()
        )
    })?;
    super::child::enable_v2_controllers(dir)
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
