//! cgroupfs reads and writes that every module of the cgroup code shares:
//! a flat-keyed counter file, handing controllers down in v2, and removing
//! a cgroup tree leaves first within its retry window. The bottom layer of
//! [`super`]: it imports none of its siblings.

use std::fs;
use std::io;
use std::path::Path;
use std::time::Duration;

/// How long removal retries while the kernel finishes tearing down the last
/// members (ms): rmdir answers EBUSY until every task has fully exited.
pub(super) const REMOVE_RETRY_WINDOW: Duration = Duration::from_millis(1_000);

/// Pause between removal attempts (ms).
pub(super) const REMOVE_RETRY_PAUSE: Duration = Duration::from_millis(10);

/// Hands `dir` and every cgroup nested in it to `remove`, leaves first (a
/// cgroup with children cannot be removed). Only directories are walked:
/// the control files go with their cgroup. A `dir` already gone is done.
pub(super) fn remove_leaves_first(
    dir: &Path,
    remove: &mut impl FnMut(&Path) -> io::Result<()>,
) -> io::Result<()> {
    match fs::read_dir(dir) {
        Ok(entries) => {
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    remove_leaves_first(&entry.path(), remove)?;
                }
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    }
    remove(dir)
}

/// Makes memory and pids available to our child cgroups (v2 only hands a
/// controller to children that the parent lists in `cgroup.subtree_control`).
pub(super) fn enable_v2_controllers(ours: &Path) -> Result<(), String> {
    let control = ours.join("cgroup.subtree_control");
    let enabled = fs::read_to_string(&control).unwrap_or_default();
    let has = |c: &str| enabled.split_whitespace().any(|e| e == c);
    if has("memory") && has("pids") {
        return Ok(());
    }
    fs::write(&control, "+memory +pids").map_err(|e| {
        format!(
            "cannot enable memory and pids in {} ({e}); cgroup v2 allows that only in a \
             cgroup without processes of its own: run the supervisor in a delegated leaf, \
             e.g. under `systemd-run --user --scope -p Delegate=yes`",
            control.display()
        )
    })
}

/// The value of `key` in a flat-keyed file such as `pids.events`; 0 when
/// missing.
pub(super) fn counter(path: &Path, key: &str) -> u64 {
    fs::read_to_string(path)
        .ok()
        .and_then(|text| {
            text.lines().find_map(|line| {
                let (k, v) = line.split_once(' ')?;
                (k == key).then(|| v.trim().parse().ok()).flatten()
            })
        })
        .unwrap_or(0)
}
