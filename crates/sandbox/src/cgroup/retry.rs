//! Cgroups whose removal outlived its retry window, tried again as the
//! program ends.
//!
//! Under load the kernel can take long to
//! tear the last member of a cgroup down (v1 memory answers EBUSY until
//! then): longer than the removal's own retry window of a second. The run does not wait for that: its result is ready. But a
//! program that ended with the cgroup still there would leave it for the
//! next program's sweep, and there may be no next program (the last batch
//! of a job array). So the dirs are kept here and [`retry_left_behind`]
//! tries them once more, with a longer window, from
//! [`crate::finish_chores`], together with any other cgroup this process
//! made that is still there.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::files::{REMOVE_RETRY_PAUSE, remove_leaves_first};

/// How long the end of a program keeps trying the left-behind cgroups.
const FINAL_RETRY_WINDOW: Duration = Duration::from_secs(5);

static LEFT_BEHIND: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Keeps `dirs` (one cgroup, a dir per hierarchy) for the final retry.
pub(super) fn leave_behind(dirs: Vec<PathBuf>) {
    LEFT_BEHIND
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .extend(dirs);
}

/// Removes the cgroups left behind, retrying while the kernel answers
/// EBUSY, for at most [`FINAL_RETRY_WINDOW`] in all. Blocks: call it on the
/// chores thread. The dirs still there after that are left to the next
/// program's sweep of stale cgroups.
pub(crate) fn retry_left_behind() {
    let mut dirs = std::mem::take(&mut *LEFT_BEHIND.lock().unwrap_or_else(PoisonError::into_inner));
    // And any cgroup of ours still there whose removal was never tried (a
    // cleanup cut short): nothing of this program runs in them any more.
    if let Some(kind) = super::discover::cgroup_kind_if_found() {
        for parent in kind.parent_dirs() {
            dirs.extend(own_children(&parent, std::process::id()));
        }
    }
    dirs.sort();
    dirs.dedup();
    remove_within(dirs, FINAL_RETRY_WINDOW);
}

/// The `subagent-<pid>-<n>` cgroups in `parent` made by process `pid`
/// (not its `-self` leaf: the process lives there).
fn own_children(parent: &Path, pid: u32) -> Vec<PathBuf> {
    let prefix = format!("subagent-{pid}-");
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            entry.file_name().to_str().is_some_and(|name| {
                name.strip_prefix(&prefix)
                    .is_some_and(|n| n.parse::<u64>().is_ok())
            })
        })
        .map(|entry| entry.path())
        .collect()
}

/// Removes each tree in `dirs`, leaves first, retrying those that stay
/// until `window` has passed; the ones still there.
fn remove_within(mut dirs: Vec<PathBuf>, window: Duration) -> Vec<PathBuf> {
    let deadline = Instant::now() + window;
    loop {
        dirs.retain(|dir| {
            remove_leaves_first(dir, &mut |d| match std::fs::remove_dir(d) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            })
            .is_err()
        });
        if dirs.is_empty() || Instant::now() >= deadline {
            return dirs;
        }
        std::thread::sleep(REMOVE_RETRY_PAUSE);
    }
}

#[cfg(test)]
#[path = "retry_tests.rs"]
mod tests;
