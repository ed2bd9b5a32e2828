//! The workspace a file tool works in: the one place its paths are resolved
//! and opened.
//!
//! A model names files relative to the workspace root. [`Workspace::resolve`]
//! turns such a name into a canonical path and refuses anything that leaves
//! the root: `..` that climbs out, an absolute path elsewhere, or a symlink
//! (anywhere in the path) whose target lies outside. The check is made on
//! the canonical path, so no spelling gets around it; its errors are the
//! ones the model reads. [`Workspace::display`] turns a path back into the
//! root-relative form tool output shows.
//!
//! The check alone is not what keeps a tool inside: a tool process (of this
//! subagent or another in the same workspace) may swap a name for a symlink
//! between the check and the open. So nothing is opened by path:
//! [`Workspace::open`] opens the canonical path beneath the root's fd with
//! every symlink refused by the kernel and checks on the fd what it got
//! ([`crate::beneath`]), and [`Workspace::walk`] walks by directory fds
//! ([`crate::walk`]). A swap makes the open fail; it never reaches outside.
//!
//! This module must not open a path of the workspace by name.

use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::beneath::{self, Opened};
use crate::tool::ToolError;
use crate::walk::WorkspaceWalk;

/// A workspace root, canonical, known to be a directory, and open.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The canonical root: every resolved path starts with it.
    root: PathBuf,
    /// The root, opened once: every open of a file tool is beneath it.
    root_fd: Arc<OwnedFd>,
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
    /// The path was swapped (for a symlink, or renamed) between its check
    /// and its open.
    #[error(
        "`{path}` changed while it was being opened (a rename or symlink in the workspace); \
         call again once the workspace is settled"
    )]
    Changed {
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
        let root_fd =
            beneath::open_root(&canonical).map_err(|source| WorkspaceError::UnusableRoot {
                root: configured.to_path_buf(),
                source,
            })?;
        Ok(Workspace {
            configured_root: normalize(configured),
            root: canonical,
            root_fd: Arc::new(root_fd),
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

    /// The root, open: writes go beneath it ([`crate::write_target`]).
    pub(crate) fn root_fd(&self) -> &OwnedFd {
        &self.root_fd
    }

    /// `path` (as [`Workspace::resolve`] takes it) relative to the root by
    /// its spelling alone (`.` dropped, `..` applied), refused when that
    /// leaves the root; it need not exist, and its symlinks are not looked
    /// at (the caller resolves what exists).
    pub(crate) fn lexical_relative(&self, path: &str) -> Result<PathBuf, WorkspaceError> {
        let requested = Path::new(if path.is_empty() { "." } else { path });
        let joined = normalize(&if requested.is_absolute() {
            requested.to_path_buf()
        } else {
            self.root.join(requested)
        });
        let relative = joined
            .strip_prefix(&self.root)
            .ok()
            .or_else(|| {
                self.configured_root
                    .is_absolute()
                    .then(|| joined.strip_prefix(&self.configured_root).ok())
                    .flatten()
            })
            .ok_or_else(|| self.outside(path))?;
        Ok(relative.to_path_buf())
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

    /// Opens `path` (as [`Workspace::resolve`] takes it) beneath the root
    /// and says what it is; returns the canonical path too.
    pub(crate) fn open(&self, path: &str) -> Result<(PathBuf, Opened), WorkspaceError> {
        let canonical = self.resolve(path)?;
        let relative = self.relative(&canonical, path)?;
        match beneath::open(self.root_fd.as_ref(), relative) {
            Ok(opened) => Ok((canonical, opened)),
            Err(source) => Err(self.open_failed(path, source)),
        }
    }

    /// Every entry under `start` (a path [`Workspace::resolve`] returned;
    /// itself first) that ripgrep would look at: see [`crate::walk`].
    pub(crate) fn walk(&self, start: &Path) -> WorkspaceWalk {
        let relative = start.strip_prefix(&self.root).unwrap_or(start);
        WorkspaceWalk::new(&self.root, Arc::clone(&self.root_fd), relative)
    }

    fn relative<'p>(&self, canonical: &'p Path, path: &str) -> Result<&'p Path, WorkspaceError> {
        canonical
            .strip_prefix(&self.root)
            .map_err(|_| self.symlink_outside(path))
    }

    /// What an open of a resolved path failing means: a symlink where the
    /// check saw none (`ELOOP`), a step out of the root (`EXDEV`) or a name
    /// gone is a swap, not a missing file.
    pub(crate) fn open_failed(&self, path: &str, source: io::Error) -> WorkspaceError {
        match source.raw_os_error() {
            Some(libc::ELOOP | libc::EXDEV | libc::ENOENT | libc::ENOTDIR) => {
                WorkspaceError::Changed {
                    path: path.to_owned(),
                }
            }
            _ => WorkspaceError::Inaccessible {
                path: path.to_owned(),
                source,
            },
        }
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

    pub(crate) fn symlink_outside(&self, path: &str) -> WorkspaceError {
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

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
