//! The vocabulary of a tool's filesystem view in host terms: what a host
//! path is ([`Kind`]), and the mounts the view is made of ([`Mount`]),
//! shared by the plan ([`super::view`]) and what it keeps out of reach in
//! a writable root ([`super::view_protect`]).
//!
//! Types only: deciding which mounts a view gets is the plan's.

use std::path::{Path, PathBuf};

/// What a host path is, as far as the plan cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    Missing,
    Dir,
    File,
    /// A character or block device (bound with its own mount's flags: a
    /// device on a `nodev` mount does not open).
    Device,
    /// A symlink, with what it says and where it leads (`None`: nowhere).
    Symlink {
        target: PathBuf,
        resolved: Option<PathBuf>,
    },
}

/// How a bind is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BindMode {
    /// `ro,nosuid,nodev` plus the source mount's locked flags.
    ReadOnly,
    /// `nosuid,nodev` plus the source mount's locked flags.
    ReadWrite,
    /// `ro,nosuid` plus the source mount's locked flags, without `nodev`
    /// (a device node on a `nodev` mount does not open). Reading and
    /// writing the device work; changing the host's node (chmod, chown,
    /// utime) gets `EROFS`.
    Device,
}

/// Where a bind's source is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BindFrom {
    /// The host (read under the old root).
    Host,
    /// The new root: a bind of something already in the view over itself.
    View,
    /// The child's working directory, entered by a descriptor the caller
    /// checked (`.`): the pinned workspace.
    Cwd,
}

/// One mount of the view, in host terms, before the plan turns it into
/// the steps the child runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mount {
    Bind {
        /// Host path, view path or nothing (the working directory), as
        /// `from` says.
        source: PathBuf,
        target: PathBuf,
        mode: BindMode,
        is_dir: bool,
        from: BindFrom,
    },
    /// An empty read-only tmpfs on a directory made for it (see the
    /// plan's `Op::Placeholder`).
    Placeholder {
        target: PathBuf,
    },
    Symlink {
        target: PathBuf,
        link: PathBuf,
    },
    Tmpfs {
        target: PathBuf,
        bytes: u64,
        mode: u32,
    },
    /// A directory of a tmpfs mounted before it (the private tmp dir).
    PrivateDir {
        target: PathBuf,
    },
    Proc {
        target: PathBuf,
    },
}

impl Mount {
    pub(crate) fn target(&self) -> &Path {
        match self {
            Mount::Bind { target, .. }
            | Mount::Tmpfs { target, .. }
            | Mount::PrivateDir { target }
            | Mount::Placeholder { target }
            | Mount::Proc { target } => target,
            Mount::Symlink { link, .. } => link,
        }
    }
}
