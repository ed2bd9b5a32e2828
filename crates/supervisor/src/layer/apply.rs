//! Applying a run's changes to a directory (the workspace, or an enclosing
//! run's view), file by file, each checked against the version the run
//! started from: a path whose change time is at or after `since` (the
//! run's start, read from the clock change times are stamped from) was changed by someone
//! else meanwhile, and is a conflict: the workspace's version is kept.
//!
//! A file is written to a temporary name beside it and renamed over the
//! old one, so a reader sees the old file or the new one, never half; a
//! symlink the same way; a directory is made or its mode changed; a
//! deletion unlinks, a directory's whole tree once every entry in it is
//! checked. Every path is reached beneath the root's descriptor without
//! following a symlink. Refused changes (see [`super::policy`]) are
//! reported, never applied.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use rustix::fs::{AtFlags, Dir, Mode, OFlags, RenameFlags};
use subagent_protocol::changes::{ChangeIssue, ChangeKind};
use subagent_sandbox::PROTECTED_WORKSPACE_ENTRIES;

use super::beneath::{self, S_IFDIR, ctime, file_type};
use super::change::{Change, Contents, Node, split};
use super::collect::MAX_DEPTH;

/// What became of each change.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Applied {
    pub(crate) applied: Vec<String>,
    pub(crate) conflicts: Vec<ChangeIssue>,
    pub(crate) refused: Vec<ChangeIssue>,
}

/// Why one change was not applied.
enum NotApplied {
    Conflict(String),
    Refused(String),
}

impl From<io::Error> for NotApplied {
    fn from(e: io::Error) -> Self {
        NotApplied::Conflict(format!("could not be applied: {e}"))
    }
}

static TEMP_NAMES: AtomicU64 = AtomicU64::new(0);

/// Applies `changes` (in path order) beneath `root`; with `dry_run`, only
/// says what would happen.
pub(crate) fn apply(
    changes: &[Change],
    root: BorrowedFd<'_>,
    since: SystemTime,
    contents: &dyn Contents,
    dry_run: bool,
) -> Applied {
    let mut out = Applied::default();
    let mut skipped_dirs: Vec<PathBuf> = Vec::new();
    // Changes come in path order: siblings share their directory's
    // descriptor (opened again after a change that may have replaced it).
    let mut parent: Option<(PathBuf, OwnedFd)> = None;
    for change in changes {
        let issue = |reason: String| ChangeIssue {
            path: change.path.clone(),
            reason,
        };
        if let Some(reason) = &change.refused {
            out.refused.push(issue(reason.clone()));
            if matches!(change.node, Node::Dir { .. }) {
                skipped_dirs.push(change.rel().to_owned());
            }
            continue;
        }
        if let Some(dir) = skipped_dirs.iter().find(|d| change.rel().starts_with(d)) {
            out.conflicts.push(issue(format!(
                "its directory {} was not applied",
                dir.display()
            )));
            continue;
        }
        let (parent_rel, _) = split(change.rel());
        let dir = match parent.take() {
            Some((rel, fd)) if rel == parent_rel => Ok(fd),
            _ => beneath::open_dir(root, &parent_rel),
        };
        let dir = match dir {
            Ok(dir) => dir,
            Err(e) => {
                out.conflicts.push(issue(format!(
                    "its directory is not a directory of the workspace any more ({e})"
                )));
                continue;
            }
        };
        let outcome = apply_one(change, root, &dir, since, contents, dry_run);
        if matches!(change.node, Node::File { .. } | Node::Symlink { .. }) {
            parent = Some((parent_rel, dir));
        }
        match outcome {
            Ok(()) => out.applied.push(change.path.clone()),
            Err(not) => {
                if matches!(change.node, Node::Dir { .. }) {
                    skipped_dirs.push(change.rel().to_owned());
                }
                match not {
                    NotApplied::Conflict(reason) => out.conflicts.push(issue(reason)),
                    NotApplied::Refused(reason) => out.refused.push(issue(reason)),
                }
            }
        }
    }
    out
}

fn apply_one(
    change: &Change,
    root: BorrowedFd<'_>,
    dir: &OwnedFd,
    since: SystemTime,
    contents: &dyn Contents,
    dry_run: bool,
) -> Result<(), NotApplied> {
    let (_, name) = split(change.rel());
    let current = beneath::stat(dir, &name)?;
    let changed = |stat: &rustix::fs::Stat| ctime(stat) >= since;
    match change.kind {
        ChangeKind::Added if current.is_some() => {
            return Err(NotApplied::Conflict(
                "made in the workspace after the run started".into(),
            ));
        }
        ChangeKind::Modified | ChangeKind::Deleted => match &current {
            None if change.kind == ChangeKind::Deleted => return Ok(()),
            None => {
                return Err(NotApplied::Conflict(
                    "deleted in the workspace after the run started".into(),
                ));
            }
            Some(stat) if changed(stat) => {
                return Err(NotApplied::Conflict(
                    "changed in the workspace after the run started".into(),
                ));
            }
            Some(_) => {}
        },
        ChangeKind::Renamed => return rename(change, root, dir, &name, since, dry_run),
        ChangeKind::Added => {}
    }
    let current_is_dir = current.is_some_and(|s| file_type(s.st_mode) == S_IFDIR);
    let wants_dir = matches!(change.node, Node::Dir { .. });
    // What stands there goes first when the type changes (or on delete).
    if current.is_some() && (change.kind == ChangeKind::Deleted || current_is_dir != wants_dir) {
        if current_is_dir {
            check_tree(dir, &name, since, change.rel(), 0)?;
            if !dry_run {
                remove_tree(dir, &name)?;
            }
        } else if !dry_run {
            rustix::fs::unlinkat(dir, &name, AtFlags::empty()).map_err(io::Error::from)?;
        }
    }
    if dry_run || change.kind == ChangeKind::Deleted {
        return Ok(());
    }
    match &change.node {
        Node::Dir { mode } => {
            if !(current_is_dir && wants_dir) {
                rustix::fs::mkdirat(dir, &name, Mode::from_raw_mode(0o700))
                    .map_err(io::Error::from)?;
            }
            rustix::fs::chmodat(dir, &name, Mode::from_raw_mode(*mode), AtFlags::empty())
                .map_err(io::Error::from)?;
            Ok(())
        }
        Node::File { mode, .. } => {
            let temp = temp_name();
            let written = write_temp(dir, &temp, change, contents, *mode);
            if let Err(e) = written {
                let _ = rustix::fs::unlinkat(dir, &temp, AtFlags::empty());
                return Err(e.into());
            }
            settle(dir, &temp, &name, change.kind, current.map(|s| ctime(&s)))
        }
        Node::Symlink { target } => {
            let temp = temp_name();
            rustix::fs::symlinkat(target.as_str(), dir, &temp).map_err(io::Error::from)?;
            settle(dir, &temp, &name, change.kind, current.map(|s| ctime(&s)))
        }
        Node::Special { .. } | Node::Gone => Ok(()),
    }
}

/// Moves the prepared `temp` to `name`, unless `name` changed since it was
/// checked (then `temp` goes and it is a conflict).
fn settle(
    dir: &OwnedFd,
    temp: &Path,
    name: &Path,
    kind: ChangeKind,
    checked: Option<SystemTime>,
) -> Result<(), NotApplied> {
    let now = beneath::stat(dir, name)?.map(|s| ctime(&s));
    let flags = if kind == ChangeKind::Added {
        RenameFlags::NOREPLACE
    } else {
        RenameFlags::empty()
    };
    let moved = if now == checked {
        rustix::fs::renameat_with(dir, temp, dir, name, flags).map_err(io::Error::from)
    } else {
        Err(io::Error::from(io::ErrorKind::AlreadyExists))
    };
    if let Err(e) = moved {
        let _ = rustix::fs::unlinkat(dir, temp, AtFlags::empty());
        return Err(if e.kind() == io::ErrorKind::AlreadyExists {
            NotApplied::Conflict("changed in the workspace while the changes were applied".into())
        } else {
            e.into()
        });
    }
    Ok(())
}

fn rename(
    change: &Change,
    root: BorrowedFd<'_>,
    dir: &OwnedFd,
    name: &Path,
    since: SystemTime,
    dry_run: bool,
) -> Result<(), NotApplied> {
    let from = change
        .from
        .as_deref()
        .map(Path::new)
        .unwrap_or(Path::new(""));
    let (from_parent, from_name) = split(from);
    let from_dir = beneath::open_dir(root, &from_parent)?;
    match beneath::stat(&from_dir, &from_name)? {
        None => Err(NotApplied::Conflict(format!(
            "{} was deleted in the workspace after the run started",
            from.display()
        ))),
        Some(stat) if ctime(&stat) >= since => Err(NotApplied::Conflict(format!(
            "{} changed in the workspace after the run started",
            from.display()
        ))),
        Some(_) if beneath::stat(dir, name)?.is_some() => Err(NotApplied::Conflict(
            "made in the workspace after the run started".into(),
        )),
        Some(_) if dry_run => Ok(()),
        Some(_) => {
            rustix::fs::renameat_with(&from_dir, &from_name, dir, name, RenameFlags::NOREPLACE)
                .map_err(|e| io::Error::from(e).into())
        }
    }
}

fn write_temp(
    dir: &OwnedFd,
    temp: &Path,
    change: &Change,
    contents: &dyn Contents,
    mode: u32,
) -> io::Result<()> {
    let fd = rustix::fs::openat(
        dir,
        temp,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    let mut target = std::fs::File::from(fd);
    let mut source = contents.open(change)?;
    std::io::copy(&mut source, &mut target)?;
    rustix::fs::fchmod(&target, Mode::from_raw_mode(mode & 0o1777))?;
    Ok(())
}

fn temp_name() -> PathBuf {
    PathBuf::from(format!(
        ".subagent-apply-{}-{}",
        std::process::id(),
        TEMP_NAMES.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Checks that nothing in the directory `name` of `dir` changed since
/// `since` and that it holds nothing the host trusts.
fn check_tree(
    dir: &OwnedFd,
    name: &Path,
    since: SystemTime,
    rel: &Path,
    depth: usize,
) -> Result<(), NotApplied> {
    if depth >= MAX_DEPTH {
        return Err(NotApplied::Conflict(format!(
            "{} is deeper than {MAX_DEPTH} directories",
            rel.display()
        )));
    }
    let sub = beneath::open_dir(dir.as_fd(), name)?;
    for entry in Dir::read_from(&sub).map_err(io::Error::from)? {
        let entry = entry.map_err(io::Error::from)?;
        let entry_name = Path::new(std::ffi::OsStr::from_bytes_compat(
            entry.file_name().to_bytes(),
        ));
        if entry_name == Path::new(".") || entry_name == Path::new("..") {
            continue;
        }
        let path = rel.join(entry_name);
        if PROTECTED_WORKSPACE_ENTRIES
            .iter()
            .any(|e| entry_name == Path::new(e))
        {
            return Err(NotApplied::Refused(format!(
                "deleting it would delete {}, which the host trusts",
                path.display()
            )));
        }
        let Some(stat) = beneath::stat(&sub, entry_name)? else {
            continue;
        };
        if ctime(&stat) >= since {
            return Err(NotApplied::Conflict(format!(
                "{} changed in the workspace after the run started",
                path.display()
            )));
        }
        if file_type(stat.st_mode) == S_IFDIR {
            check_tree(&sub, entry_name, since, &path, depth + 1)?;
        }
    }
    Ok(())
}

/// Removes the directory `name` of `dir` with everything in it.
fn remove_tree(dir: &OwnedFd, name: &Path) -> io::Result<()> {
    let sub = beneath::open_dir(dir.as_fd(), name)?;
    let mut names = Vec::new();
    for entry in Dir::read_from(&sub)? {
        let entry = entry?;
        let entry_name =
            std::ffi::OsStr::from_bytes_compat(entry.file_name().to_bytes()).to_owned();
        if entry_name != "." && entry_name != ".." {
            names.push(PathBuf::from(entry_name));
        }
    }
    for entry in names {
        match beneath::stat(&sub, &entry)? {
            Some(stat) if file_type(stat.st_mode) == S_IFDIR => remove_tree(&sub, &entry)?,
            Some(_) => rustix::fs::unlinkat(&sub, &entry, AtFlags::empty())?,
            None => {}
        }
    }
    rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?;
    Ok(())
}

/// `OsStr::from_bytes`, named for the call sites above.
trait FromBytesCompat {
    fn from_bytes_compat(bytes: &[u8]) -> &Self;
}

impl FromBytesCompat for std::ffi::OsStr {
    fn from_bytes_compat(bytes: &[u8]) -> &Self {
        std::os::unix::ffi::OsStrExt::from_bytes(bytes)
    }
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod tests;
