//! No `.git` left for the host to run: what a process tool made or changed
//! of git's in the workspace is set aside after the call.
//!
//! A `.git` directory (or gitdir file, or symlink) names a repository whose
//! config and hooks the host's `git` obeys: `core.fsmonitor`,
//! `core.hooksPath`, a `pre-commit` hook all run commands, as the user, on
//! the next `git status` or `git commit` in that directory. A tool process
//! may write anywhere in its workspace, so [`snapshot`] records every
//! `.git` entry before a call (what it is, and for a git directory the
//! identity and change time of what in it git runs or follows: `config`,
//! `config.worktree`, `commondir`, `gitdir`, `hooks/` and each hook, and
//! the same of `modules/*` and `worktrees/*`), and after the call every
//! entry that is new or whose record changed is renamed aside
//! ([`quarantine`]: `.git` becomes `.git.quarantined-<tag>`), for the
//! operator to look at. Change times cannot be set by a tool (utime sets
//! the other two), so a rewrite is seen whatever times it leaves.
//!
//! The walk goes by directory fds beneath the root ([`crate::beneath`]),
//! never follows a symlink, stays on the root's filesystem, and does not
//! descend into a `.git`. It is bounded: [`MAX_ENTRIES`] entries and
//! [`MAX_DEPTH`] levels; a snapshot that stopped there says so
//! ([`GitSnapshot::complete`]), and its caller decides (a call is refused
//! before it starts; after one, what was past the bound is reported as
//! unchecked). It blocks: callers run it off the async runtime.
//!
//! This module renames only entries named `.git`, and never deletes.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{AtFlags, FileType, RenameFlags};

use crate::beneath::{self, EntryKind};

/// Entries a snapshot reads at most (every directory entry counts, and
/// each part of a git directory). Measured: 10,106 entries in 30 ms, 101,006 in 315 ms
/// (debug build, warm cache, 2 shared cores), so the bound costs about 3 s
/// a walk in a debug build, twice a call; the `--tool-disk` measurement
/// walks the same tree with a `stat` of every entry, so this is not the
/// larger cost.
pub const MAX_ENTRIES: u64 = 1_000_000;

/// Directory levels below the root a snapshot descends at most; one fd is
/// open per level being walked.
pub const MAX_DEPTH: usize = 128;

/// The name git looks for.
const DOT_GIT: &str = ".git";

/// What in a git directory the host's git runs or follows.
const GITDIR_PARTS: &[&str] = &["config", "config.worktree", "commondir", "gitdir", "hooks"];

/// Directories of a git directory holding more git directories
/// (submodules' and worktrees'), each checked as one.
const NESTED_GITDIRS: &[&str] = &["modules", "worktrees"];

/// How deep nested git directories are followed (`modules/a/modules/b`).
const MAX_NESTED: usize = 4;

/// One file's identity and last change, as `stat` (without following)
/// reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    kind: u32,
    ctime: (i64, u64),
    size: u64,
}

/// What a `.git` entry was.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fingerprint {
    /// A git directory: which directory, and the parts git obeys, by their
    /// path in it. Its own change time is left out: the host's own git
    /// changes it on every commit.
    Dir {
        dev: u64,
        ino: u64,
        parts: BTreeMap<PathBuf, Identity>,
    },
    /// A gitdir file, a symlink or anything else named `.git`.
    Entry(Identity),
}

/// Every `.git` entry of a workspace, by its path relative to the root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitSnapshot {
    entries: BTreeMap<PathBuf, Fingerprint>,
    /// Entries read.
    read: u64,
    /// False when the walk stopped at [`MAX_ENTRIES`] or [`MAX_DEPTH`].
    complete: bool,
}

impl GitSnapshot {
    /// Whether the whole workspace was walked.
    pub fn complete(&self) -> bool {
        self.complete
    }

    /// Entries read.
    pub fn read(&self) -> u64 {
        self.read
    }
}

/// Why an entry is set aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// It did not exist before the call.
    Made,
    /// It, or what in it git runs or follows, changed during the call.
    Changed,
}

impl Change {
    /// As the report says it.
    pub fn describe(self) -> &'static str {
        match self {
            Change::Made => "made by the call",
            Change::Changed => "its config, hooks or target changed during the call",
        }
    }
}

/// Walks the directory `root` (a descriptor, read from its start) for
/// `.git` entries. Blocking.
pub fn snapshot(root: BorrowedFd<'_>) -> io::Result<GitSnapshot> {
    let root_dev = rustix::fs::fstat(root)?.st_dev;
    let mut walk = Walk {
        root_dev,
        snapshot: GitSnapshot {
            complete: true,
            ..GitSnapshot::default()
        },
    };
    let root = Arc::new(root.try_clone_to_owned()?);
    // Depth first, each directory opened beneath its parent's fd when its
    // turn comes: open fds stay one per level.
    let mut pending: Vec<(Arc<OwnedFd>, OsString, PathBuf, usize)> = Vec::new();
    walk.read_dir(&root, Path::new(""), 0, &mut pending);
    while let Some((parent, name, relative, depth)) = pending.pop() {
        if walk.spent() {
            break;
        }
        let Ok(fd) = beneath::open_directory(&*parent, &name) else {
            // Gone, or swapped for a symlink, since it was listed.
            continue;
        };
        drop(parent);
        let fd = Arc::new(fd);
        walk.read_dir(&fd, &relative, depth, &mut pending);
    }
    Ok(walk.snapshot)
}

/// One snapshot's walk.
struct Walk {
    root_dev: u64,
    snapshot: GitSnapshot,
}

impl Walk {
    fn spent(&mut self) -> bool {
        if self.snapshot.read >= MAX_ENTRIES {
            self.snapshot.complete = false;
        }
        !self.snapshot.complete
    }

    /// Records the `.git` entries of the directory `fd` (at `relative`) and
    /// queues its other subdirectories.
    fn read_dir(
        &mut self,
        fd: &Arc<OwnedFd>,
        relative: &Path,
        depth: usize,
        pending: &mut Vec<(Arc<OwnedFd>, OsString, PathBuf, usize)>,
    ) {
        // Another filesystem mounted here is not the workspace's.
        if rustix::fs::fstat(&**fd).map(|s| s.st_dev).ok() != Some(self.root_dev) {
            return;
        }
        let Ok(entries) = beneath::entries(&**fd) else {
            return;
        };
        for (name, kind) in entries {
            self.snapshot.read += 1;
            if self.spent() {
                return;
            }
            let path = relative.join(&name);
            if name == DOT_GIT {
                if let Some(fingerprint) = self.fingerprint(fd.as_fd(), &name) {
                    self.snapshot.entries.insert(path, fingerprint);
                }
            } else if kind == EntryKind::Directory {
                if depth + 1 > MAX_DEPTH {
                    self.snapshot.complete = false;
                    return;
                }
                pending.push((Arc::clone(fd), name, path, depth + 1));
            }
        }
    }

    /// What the `.git` entry `name` of `parent` is.
    fn fingerprint(&mut self, parent: BorrowedFd<'_>, name: &OsStr) -> Option<Fingerprint> {
        let identity = identity(parent, name)?;
        if identity.kind != FileType::Directory.as_raw_mode() {
            return Some(Fingerprint::Entry(identity));
        }
        let mut parts = BTreeMap::new();
        if let Ok(gitdir) = beneath::open_directory(parent, name) {
            self.gitdir_parts(gitdir.as_fd(), Path::new(""), 0, &mut parts);
        }
        Some(Fingerprint::Dir {
            dev: identity.dev,
            ino: identity.ino,
            parts,
        })
    }

    /// The parts of the git directory `dir` (at `prefix` in the `.git`),
    /// and of the git directories nested in it.
    fn gitdir_parts(
        &mut self,
        dir: BorrowedFd<'_>,
        prefix: &Path,
        nesting: usize,
        parts: &mut BTreeMap<PathBuf, Identity>,
    ) {
        for part in GITDIR_PARTS {
            self.snapshot.read += 1;
            if let Some(id) = identity(dir, OsStr::new(part)) {
                parts.insert(prefix.join(part), id);
            }
        }
        if let Ok(hooks) = beneath::open_directory(dir, OsStr::new("hooks"))
            && let Ok(entries) = beneath::entries(&hooks)
        {
            for (hook, _) in entries {
                self.snapshot.read += 1;
                if self.spent() {
                    return;
                }
                if let Some(id) = identity(hooks.as_fd(), &hook) {
                    parts.insert(prefix.join("hooks").join(&hook), id);
                }
            }
        }
        if nesting >= MAX_NESTED {
            return;
        }
        for holder in NESTED_GITDIRS {
            let Ok(held) = beneath::open_directory(dir, OsStr::new(holder)) else {
                continue;
            };
            let Ok(entries) = beneath::entries(&held) else {
                continue;
            };
            for (name, kind) in entries {
                self.snapshot.read += 1;
                if self.spent() {
                    return;
                }
                if kind != EntryKind::Directory {
                    continue;
                }
                if let Ok(nested) = beneath::open_directory(&held, &name) {
                    let at = prefix.join(holder).join(&name);
                    self.gitdir_parts(nested.as_fd(), &at, nesting + 1, parts);
                }
            }
        }
    }
}

/// `name` of `dir`, not followed; `None` when it is not there.
fn identity(dir: BorrowedFd<'_>, name: &OsStr) -> Option<Identity> {
    let stat = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    Some(Identity {
        dev: stat.st_dev,
        ino: stat.st_ino,
        kind: FileType::from_raw_mode(stat.st_mode).as_raw_mode(),
        ctime: (stat.st_ctime, stat.st_ctime_nsec),
        size: u64::try_from(stat.st_size).unwrap_or(0),
    })
}

/// The `.git` entries of `after` that are new or changed since `before`,
/// in path order. `skip_top`: the root's own `.git` is left out (it was
/// bound read-only for the call, so no tool changed it).
pub fn changes(
    before: &GitSnapshot,
    after: &GitSnapshot,
    skip_top: bool,
) -> Vec<(PathBuf, Change)> {
    after
        .entries
        .iter()
        .filter(|(path, _)| !(skip_top && path.as_path() == Path::new(DOT_GIT)))
        .filter_map(|(path, now)| match before.entries.get(path) {
            None => Some((path.clone(), Change::Made)),
            Some(was) if was != now => Some((path.clone(), Change::Changed)),
            Some(_) => None,
        })
        .collect()
}

/// Renames the `.git` entry at `entry` (relative to `root`) to
/// `.git.quarantined-<tag>` beside it (`-2`, `-3`, ... when taken), never
/// over anything; the new relative path.
pub fn quarantine(root: BorrowedFd<'_>, entry: &Path, tag: &str) -> io::Result<PathBuf> {
    if entry.file_name() != Some(OsStr::new(DOT_GIT)) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a .git entry", entry.display()),
        ));
    }
    let parent_path = entry.parent().unwrap_or(Path::new(""));
    let parent = open_beneath(root, parent_path)?;
    let base = format!("{DOT_GIT}.quarantined-{tag}");
    for attempt in 1..=100u32 {
        let name = if attempt == 1 {
            base.clone()
        } else {
            format!("{base}-{attempt}")
        };
        match rustix::fs::renameat_with(&parent, DOT_GIT, &parent, &name, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(parent_path.join(name)),
            Err(rustix::io::Errno::EXIST) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("100 quarantine names beside {} are taken", entry.display()),
    ))
}

/// The directory at `relative` beneath `root`, one component at a time.
fn open_beneath(root: BorrowedFd<'_>, relative: &Path) -> io::Result<OwnedFd> {
    let mut dir = root.try_clone_to_owned()?;
    for component in relative.components() {
        let Component::Normal(name) = component else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a plain relative path", relative.display()),
            ));
        };
        dir = beneath::open_directory(&dir, name)?;
    }
    Ok(dir)
}

#[cfg(test)]
#[path = "git_guard_tests.rs"]
mod tests;
