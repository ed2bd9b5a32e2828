//! The workspace a file tool works in: the one place its paths are resolved.
//!
//! A model names files relative to the workspace root. [`Workspace::resolve`]
//! turns such a name into a canonical path and refuses anything that leaves
//! the root: `..` that climbs out, an absolute path elsewhere, or a symlink
//! (anywhere in the path) whose target lies outside. The check is made on
//! the canonical path, so no spelling gets around it. [`Workspace::display`]
//! turns a path back into the root-relative form tool output shows, and
//! [`Workspace::walk`] is the one directory walk of the file tools, with
//! ripgrep's filters (`.gitignore`, `.ignore`, hidden files) bounded by the
//! root.
//!
//! What this does not guard against: a path that is swapped for a symlink
//! between resolving and opening it. The file tools run in the worker, and
//! nothing writes to the workspace while one of them runs except a tool
//! process, which has its own sandbox. This module must not open files for
//! a tool; it only says which path the tool may open.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use ignore::{DirEntry, Walk, WalkBuilder};

use crate::tool::ToolError;

/// A workspace root, canonical, known to be a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// The canonical root: every resolved path starts with it.
    root: PathBuf,
    /// The root as configured, lexically normalized. An absolute path the
    /// model copies from an earlier message may be spelt this way when the
    /// configured root goes through a symlink (e.g. `/tmp` on macOS).
    configured_root: PathBuf,
}

/// A path a tool was given could not be used.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The configured root does not exist or cannot be read.
    #[error("the workspace root {} cannot be used: {source}", root.display())]
    UnusableRoot {
        /// The root as configured.
        root: PathBuf,
        /// Why it could not be canonicalized.
        #[source]
        source: io::Error,
    },
    /// The configured root is a file or something else that is no directory.
    #[error("the workspace root {} is not a directory", root.display())]
    RootNotADirectory {
        /// The canonical root.
        root: PathBuf,
    },
    /// The path leaves the root by `..` or is an absolute path elsewhere.
    #[error("paths are relative to the workspace root {}; `{path}` is outside it", root.display())]
    Outside {
        /// The canonical root.
        root: PathBuf,
        /// The path as given.
        path: String,
    },
    /// The path stays inside by its spelling, but a symlink in it leads out.
    #[error(
        "paths are relative to the workspace root {}; `{path}` is outside it (a symlink in it leads out of the workspace)",
        root.display()
    )]
    SymlinkOutside {
        /// The canonical root.
        root: PathBuf,
        /// The path as given.
        path: String,
    },
    /// Nothing exists at the path.
    #[error("no such file or directory: `{path}` (relative to the workspace root {})", root.display())]
    NotFound {
        /// The canonical root.
        root: PathBuf,
        /// The path as given.
        path: String,
    },
    /// The path exists but cannot be resolved, e.g. for lack of permission.
    #[error("cannot access `{path}`: {source}")]
    Inaccessible {
        /// The path as given.
        path: String,
        /// What the filesystem said.
        #[source]
        source: io::Error,
    },
}

impl From<WorkspaceError> for ToolError {
    fn from(e: WorkspaceError) -> Self {
        ToolError::Failed(e.to_string())
    }
}

impl Workspace {
    /// The workspace rooted at `root`, which must be an existing directory.
    pub fn new(root: impl AsRef<Path>) -> Result<Workspace, WorkspaceError> {
        let configured = root.as_ref();
        let canonical =
            fs::canonicalize(configured).map_err(|source| WorkspaceError::UnusableRoot {
                root: configured.to_path_buf(),
                source,
            })?;
        if !canonical.is_dir() {
            return Err(WorkspaceError::RootNotADirectory { root: canonical });
        }
        Ok(Workspace {
            configured_root: normalize(configured),
            root: canonical,
        })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The canonical path of `path` (relative to the root, or absolute inside
    /// it; empty means the root), refused when it is outside the root or
    /// does not exist.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, WorkspaceError> {
        let requested = Path::new(if path.is_empty() { "." } else { path });
        let joined = if requested.is_absolute() {
            requested.to_path_buf()
        } else {
            self.root.join(requested)
        };
        // Refused by its spelling before the filesystem is asked, so a path
        // outside is refused the same way whether it exists or not.
        if !self.is_lexically_inside(&normalize(&joined)) {
            return Err(self.outside(path));
        }
        match fs::canonicalize(&joined) {
            Ok(canonical) if canonical.starts_with(&self.root) => Ok(canonical),
            Ok(_) => Err(self.symlink_outside(path)),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                Err(self.missing(path, &joined))
            }
            Err(source) => Err(WorkspaceError::Inaccessible {
                path: path.to_owned(),
                source,
            }),
        }
    }

    /// `path` as tool output shows it: relative to the root, `.` for the
    /// root itself. A path outside the root (which [`Workspace::resolve`]
    /// never returns) is shown whole.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
            Ok(relative) => relative.to_string_lossy().into_owned(),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }

    /// Every entry under `start` (a resolved path; itself included) that
    /// ripgrep would look at: `.gitignore` (whether or not the workspace is
    /// a git repository), `.ignore` and `.git/info/exclude` honoured, hidden
    /// files and directories skipped, symlinks not followed, entries of one
    /// directory in name order.
    ///
    /// Ignore files are read from the root down, never above it: a
    /// `.gitignore` outside the workspace must not hide files in it. When
    /// `start` is itself hidden or ignored, it was named on purpose, so it is
    /// walked anyway with only the rules found inside it.
    pub(crate) fn walk(&self, start: &Path) -> WorkspaceWalk {
        let mut from_root = self.walk_builder(&self.root);
        let target = start.to_path_buf();
        // Only the chain of directories that leads to `start`, and `start`'s
        // own subtree, is visited: siblings are listed but never entered.
        from_root.filter_entry(move |entry| {
            entry.path().starts_with(&target) || target.starts_with(entry.path())
        });
        WorkspaceWalk {
            walk: from_root.build(),
            start: start.to_path_buf(),
            start_seen: false,
            fallback: Some(self.walk_builder(start)),
        }
    }

    fn walk_builder(&self, from: &Path) -> WalkBuilder {
        let mut builder = WalkBuilder::new(from);
        builder
            .standard_filters(true)
            // The workspace's own rules decide, not the machine's user config.
            .git_global(false)
            .parents(false)
            .require_git(false)
            .follow_links(false)
            .sort_by_file_name(|a, b| a.cmp(b));
        builder
    }

    fn is_lexically_inside(&self, normalized: &Path) -> bool {
        normalized.starts_with(&self.root)
            || (self.configured_root.is_absolute() && normalized.starts_with(&self.configured_root))
    }

    /// A path that does not exist is refused as outside when its deepest
    /// existing ancestor already leads out (through a symlink), so a missing
    /// name never tells the model what exists outside.
    fn missing(&self, path: &str, joined: &Path) -> WorkspaceError {
        for ancestor in joined.ancestors().skip(1) {
            if let Ok(canonical) = fs::canonicalize(ancestor) {
                if !canonical.starts_with(&self.root) {
                    return self.symlink_outside(path);
                }
                break;
            }
        }
        WorkspaceError::NotFound {
            root: self.root.clone(),
            path: path.to_owned(),
        }
    }

    fn outside(&self, path: &str) -> WorkspaceError {
        WorkspaceError::Outside {
            root: self.root.clone(),
            path: path.to_owned(),
        }
    }

    fn symlink_outside(&self, path: &str) -> WorkspaceError {
        WorkspaceError::SymlinkOutside {
            root: self.root.clone(),
            path: path.to_owned(),
        }
    }
}

/// `path` with `.` dropped and `..` applied by spelling alone (`..` above
/// `/` stays at `/`, as the kernel does).
fn normalize(path: &Path) -> PathBuf {
    let mut normalized = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normalized.pop();
            }
            other => normalized.push(other),
        }
    }
    normalized
}

/// The entries of [`Workspace::walk`].
pub(crate) struct WorkspaceWalk {
    walk: Walk,
    start: PathBuf,
    start_seen: bool,
    /// The walk from `start` itself, used when the walk from the root never
    /// reached `start` because it is hidden or ignored.
    fallback: Option<WalkBuilder>,
}

impl Iterator for WorkspaceWalk {
    type Item = Result<DirEntry, ignore::Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.walk.next() {
                Some(Ok(entry)) => {
                    // The directories on the way down are not `start`'s.
                    if !entry.path().starts_with(&self.start) {
                        continue;
                    }
                    self.start_seen = true;
                    return Some(Ok(entry));
                }
                Some(Err(e)) => return Some(Err(e)),
                None => {
                    let fallback = self.fallback.take()?;
                    if self.start_seen {
                        return None;
                    }
                    self.walk = fallback.build();
                    // Entries of the fallback walk are all under `start`.
                    self.start_seen = true;
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
