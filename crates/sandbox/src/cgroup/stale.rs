//! The sweep of cgroups left by supervisors that died: `subagent-<pid>-<n>`
//! directories (and `subagent-<pid>-self`, the leaf a process moved into in
//! a delegated cgroup) under our own cgroup, in every hierarchy we make children's
//! cgroups in, whose creator `<pid>` is gone.
//!
//! A supervisor killed in the middle of a tool call leaves more than its
//! worker's cgroup: the worker's tool cgroups nested in it, perhaps frozen
//! (the worker was freezing one to kill it), perhaps with a member still
//! exiting. `rmdir` of the top alone answers EBUSY for as long as any of
//! that is there, so each stale tree is taken down whole: thawed (a frozen
//! process keeps even a SIGKILL pending), its members killed, then removed
//! leaves first, retrying while the kernel finishes tearing down the dead.
//! What was removed, and what could not be, is logged at debug level.
//!
//! It only touches cgroups named by our scheme whose creator is gone: a live
//! supervisor's cgroups, and everything else, are left alone.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::files::{REMOVE_RETRY_PAUSE, REMOVE_RETRY_WINDOW, remove_leaves_first};
use super::kind::CgroupKind;
use super::members::{CgroupMembers, thaw_below};

/// Removes the stale cgroup trees under each of `kind`'s directories.
pub(crate) fn sweep_stale(kind: &CgroupKind) {
    let parents = kind.parent_dirs();
    for parent in parents {
        for dir in stale_children(&parent) {
            let mut removed = Vec::new();
            match remove_stale_tree(&dir, &mut removed) {
                Ok(()) => tracing::debug!(
                    cgroup = %dir.display(),
                    removed = ?removed,
                    "removed the cgroup tree of a supervisor that is gone"
                ),
                Err(e) => tracing::debug!(
                    cgroup = %dir.display(),
                    removed = ?removed,
                    error = %e,
                    "could not remove the cgroup tree of a supervisor that is gone"
                ),
            }
        }
    }
}

/// The `subagent-<pid>-<n>` directories in `parent` whose creator is gone.
fn stale_children(parent: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(parent) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .and_then(stale_owner)
                .is_some_and(|owner| {
                    owner != std::process::id() && !Path::new(&format!("/proc/{owner}")).exists()
                })
        })
        .map(|entry| entry.path())
        .collect()
}

/// The creator's pid of a cgroup named `subagent-<pid>-<n>`, or the pid of
/// the process that moved itself into the leaf `subagent-<pid>-self` of its
/// delegated cgroup ([`super::delegate`]).
pub(super) fn stale_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("subagent-")?;
    let (pid, n) = rest.split_once('-')?;
    if n != "self" {
        n.parse::<u64>().ok()?;
    }
    pid.parse().ok()
}

/// Takes down the cgroup at `dir` and everything nested in it: thaws it,
/// kills every member, removes the leaves, then it; adds what it removed
/// to `removed`.
pub(super) fn remove_stale_tree(dir: &Path, removed: &mut Vec<PathBuf>) -> io::Result<()> {
    thaw_tree(dir);
    let kill = Some(dir.join("cgroup.kill")).filter(|p| p.exists());
    // No freezer: the tree was just thawed, and a member of a dead
    // supervisor's cgroup has nobody left to fork for.
    CgroupMembers::new(vec![dir.to_owned()], kill, None).signal_all(libc::SIGKILL);
    remove_leaves_first(dir, &mut |dir| remove_retrying(dir, removed))
}

/// Thaws `dir` and every cgroup nested in it, parents first: in v1 a
/// cgroup under a frozen one stays frozen.
fn thaw_tree(dir: &Path) {
    for (name, word) in [("freezer.state", "THAWED"), ("cgroup.freeze", "0")] {
        let file = dir.join(name);
        if file.exists() {
            let _ = fs::write(&file, word);
            thaw_below(dir, std::ffi::OsStr::new(name), word);
        }
    }
}

/// Removes `dir`, an empty cgroup, adding it to `removed`.
fn remove_retrying(dir: &Path, removed: &mut Vec<PathBuf>) -> io::Result<()> {
    // EBUSY while the killed members finish exiting.
    let deadline = Instant::now() + REMOVE_RETRY_WINDOW;
    loop {
        match fs::remove_dir(dir) {
            Ok(()) => {
                removed.push(dir.to_owned());
                return Ok(());
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && Instant::now() < deadline => {
                std::thread::sleep(REMOVE_RETRY_PAUSE);
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
#[path = "stale_tests.rs"]
mod tests;
