//! What the filesystem view keeps out of a tool's reach inside one of its
//! writable roots (the workspace): the configuration the host trusts.
//!
//! - [`PROTECTED_WORKSPACE_ENTRIES`] (`.subagent`, `.claude`, `.git`) are
//!   bound read-only over themselves when they are a directory or a file;
//!   when absent, an empty read-only placeholder takes the name, so a tool
//!   cannot create them (a `.git` a tool made, with a `core.fsmonitor`
//!   command, would run on the host's next `git status`). A symlinked
//!   entry is left alone: a mount would land on its target.
//! - The caller's protected paths in the root (a sessions dir or results
//!   file the operator put in the workspace) are bound read-only over
//!   themselves, and every directory between the root and them is bound
//!   over itself read-write: a mount point cannot be renamed or removed,
//!   so a tool cannot move the file's directory away and put a forged one
//!   in its place.
//!
//! Decides only, from what the host looks like (`kind`); the placeholders'
//! directories are made by the child and removed by whoever waits for it.

use std::path::{Path, PathBuf};

use super::config::PROTECTED_WORKSPACE_ENTRIES;
use super::view_mount::{BindFrom, BindMode, Kind, Mount};

/// The mounts that protect what lies in the writable root `root` (a
/// directory): the configuration entries and the paths of `protected`
/// inside it.
pub(crate) fn root_protections(
    root: &Path,
    protected: &[PathBuf],
    kind: &dyn Fn(&Path) -> Kind,
) -> Vec<Mount> {
    let mut mounts = Vec::new();
    for entry in PROTECTED_WORKSPACE_ENTRIES {
        let path = root.join(entry);
        match kind(&path) {
            Kind::Dir => mounts.push(over_itself(path, true, BindMode::ReadOnly)),
            Kind::File => mounts.push(over_itself(path, false, BindMode::ReadOnly)),
            Kind::Missing => mounts.push(Mount::Placeholder { target: path }),
            Kind::Device | Kind::Symlink { .. } => {}
        }
    }
    let mut pinned_dirs: Vec<PathBuf> = Vec::new();
    for path in protected {
        let Ok(relative) = path.strip_prefix(root) else {
            continue;
        };
        if relative.as_os_str().is_empty() {
            continue;
        }
        let is_dir = match kind(path) {
            Kind::Dir => true,
            Kind::File => false,
            _ => continue,
        };
        for dir in path.ancestors().skip(1) {
            if dir == root {
                break;
            }
            if kind(dir) == Kind::Dir && !pinned_dirs.iter().any(|d| d == dir) {
                pinned_dirs.push(dir.to_owned());
            }
        }
        mounts.push(over_itself(path.clone(), is_dir, BindMode::ReadOnly));
    }
    for dir in pinned_dirs {
        // Read-write: only the name is held, the directory stays the tool's.
        if !mounts.iter().any(|m| bound_at(m, &dir)) {
            mounts.push(over_itself(dir, true, BindMode::ReadWrite));
        }
    }
    mounts
}

/// `path` bound over itself in the view.
fn over_itself(path: PathBuf, is_dir: bool, mode: BindMode) -> Mount {
    Mount::Bind {
        source: path.clone(),
        target: path,
        mode,
        is_dir,
        from: BindFrom::View,
    }
}

fn bound_at(mount: &Mount, path: &Path) -> bool {
    matches!(mount, Mount::Bind { target, .. } if target == path)
}
