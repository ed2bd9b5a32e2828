//! The one directory walk of the file tools (`bash_find`, `bash_ripgrep`):
//! what ripgrep would look at, walked by directory fds.
//!
//! Each directory is opened beneath its parent's fd with symlinks refused
//! ([`crate::beneath`]), its entries are listed from that fd, and a file is
//! later opened beneath the same parent fd ([`WalkEntry::open_file`]). So a
//! name swapped for a symlink to outside while the walk runs is refused by
//! the kernel, never entered or read: the walk cannot leave the workspace
//! whatever a tool process renames meanwhile. Symlinks are listed as such
//! and never followed.
//!
//! Filters as ripgrep's defaults: `.ignore`, `.gitignore` (in a git
//! repository or not) and `.git/info/exclude` from the workspace root down,
//! never above it ([`crate::ignore_rules`]); hidden entries skipped unless a
//! rule whitelists them. When the start is itself hidden or ignored it was
//! named on purpose: it is walked with only the rules found inside it.
//! Entries of one directory come in name order, a directory before its
//! contents.

use std::ffi::OsString;
use std::fmt;
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::Match;

use crate::beneath::{self, EntryKind, SpecialKind};
use crate::ignore_rules::RuleStack;

/// One entry of a walk.
#[derive(Debug)]
pub(crate) struct WalkEntry {
    /// Root-relative; empty for the root.
    relative: PathBuf,
    kind: EntryKind,
    /// The directory holding it and its name there (`None` for the root).
    parent: Option<(Arc<OwnedFd>, OsString)>,
}

impl WalkEntry {
    /// The path relative to the workspace root (empty for the root).
    pub(crate) fn relative(&self) -> &Path {
        &self.relative
    }

    /// What the entry was when it was listed.
    pub(crate) fn kind(&self) -> EntryKind {
        self.kind
    }

    /// Opens the entry beneath its directory's fd: `Ok(Err)` when it is no
    /// longer a regular file (swapped, or a FIFO or device).
    pub(crate) fn open_file(&self) -> io::Result<Result<File, Option<SpecialKind>>> {
        match &self.parent {
            Some((dir, name)) => beneath::open_file(dir.as_ref(), name),
            None => Ok(Err(None)),
        }
    }
}

/// An entry that could not be listed or entered.
#[derive(Debug)]
pub(crate) struct WalkError {
    relative: PathBuf,
    source: io::Error,
}

impl fmt::Display for WalkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = if self.relative.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &self.relative
        };
        write!(f, "{}: {}", shown.display(), self.source)
    }
}

struct Frame {
    dir: Arc<OwnedFd>,
    relative: PathBuf,
    entries: std::vec::IntoIter<(OsString, EntryKind)>,
    /// Depth of the rule stack before this directory's rules were added.
    rules_depth: usize,
}

/// The entries under a start directory (itself first), or the start file.
pub(crate) struct WorkspaceWalk {
    root: PathBuf,
    rules: RuleStack,
    stack: Vec<Frame>,
    first: Option<Result<WalkEntry, WalkError>>,
}

impl WorkspaceWalk {
    /// A walk of `relative` (no symlinks in it, as a canonical path has
    /// none) under `root`, whose open fd is `root_fd`.
    pub(crate) fn new(root: &Path, root_fd: Arc<OwnedFd>, relative: &Path) -> WorkspaceWalk {
        let mut walk = WorkspaceWalk {
            root: root.to_path_buf(),
            rules: RuleStack::default(),
            stack: Vec::new(),
            first: None,
        };
        walk.first = Some(
            walk.descend_to(root_fd, relative)
                .map_err(|source| WalkError {
                    relative: relative.to_path_buf(),
                    source,
                }),
        );
        walk
    }

    /// Ignore files that were skipped, as one line for the tool result.
    pub(crate) fn skipped_note(&self) -> Option<String> {
        self.rules.skipped_note()
    }

    /// Opens the chain of directories from the root to `relative`, one fd
    /// beneath the other, gathering their rules; returns the start entry.
    fn descend_to(&mut self, root_fd: Arc<OwnedFd>, relative: &Path) -> io::Result<WalkEntry> {
        let mut dir = root_fd;
        let mut walked = PathBuf::new();
        self.rules.enter(dir.as_ref(), &self.root, &walked);
        let mut hidden_start = false;
        let names: Vec<OsString> = relative.iter().map(std::ffi::OsStr::to_os_string).collect();
        for (i, name) in names.iter().enumerate() {
            walked.push(name);
            let kind = beneath::entry_kind(dir.as_ref(), name)?;
            hidden_start |= self.is_skipped(&walked, kind == EntryKind::Directory);
            if i + 1 == names.len() && kind != EntryKind::Directory {
                return Ok(WalkEntry {
                    relative: walked,
                    kind,
                    parent: Some((dir, name.clone())),
                });
            }
            let next = Arc::new(beneath::open_directory(dir.as_ref(), name)?);
            if !hidden_start {
                self.rules
                    .enter(next.as_ref(), &self.root.join(&walked), &walked);
            }
            dir = next;
        }
        if hidden_start {
            self.rules.clear();
            self.rules
                .enter(dir.as_ref(), &self.root.join(&walked), &walked);
        }
        self.stack.push(Frame {
            entries: beneath::entries(dir.as_ref())?.into_iter(),
            dir,
            relative: walked.clone(),
            rules_depth: 0,
        });
        Ok(WalkEntry {
            relative: walked,
            kind: EntryKind::Directory,
            // A directory is never opened as a file: no parent kept.
            parent: None,
        })
    }

    /// Ignored by a rule, or hidden and not whitelisted.
    fn is_skipped(&self, relative: &Path, is_dir: bool) -> bool {
        match self.rules.matched(&self.root.join(relative), is_dir) {
            Match::Ignore(()) => true,
            Match::Whitelist(()) => false,
            Match::None => relative
                .file_name()
                .is_some_and(|name| name.as_bytes().first() == Some(&b'.')),
        }
    }
}

impl Iterator for WorkspaceWalk {
    type Item = Result<WalkEntry, WalkError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(first) = self.first.take() {
            return Some(first);
        }
        loop {
            let frame = self.stack.last_mut()?;
            let Some((name, kind)) = frame.entries.next() else {
                if let Some(done) = self.stack.pop() {
                    self.rules.truncate(done.rules_depth);
                }
                continue;
            };
            let relative = frame.relative.join(&name);
            let parent = Arc::clone(&frame.dir);
            if self.is_skipped(&relative, kind == EntryKind::Directory) {
                continue;
            }
            if kind == EntryKind::Directory
                && let Err(source) = self.enter(&parent, &name, &relative)
            {
                return Some(Err(WalkError { relative, source }));
            }
            return Some(Ok(WalkEntry {
                relative,
                kind,
                parent: Some((parent, name)),
            }));
        }
    }
}

impl WorkspaceWalk {
    /// Opens directory `name` beneath `parent` and pushes it: its entries
    /// come next.
    fn enter(&mut self, parent: &OwnedFd, name: &OsString, relative: &Path) -> io::Result<()> {
        let dir = beneath::open_directory(parent, name)?;
        let entries = beneath::entries(&dir)?;
        let rules_depth = self.rules.depth();
        self.rules.enter(&dir, &self.root.join(relative), relative);
        self.stack.push(Frame {
            dir: Arc::new(dir),
            relative: relative.to_path_buf(),
            entries: entries.into_iter(),
            rules_depth,
        });
        Ok(())
    }
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "race_tests.rs"]
mod race_tests;
