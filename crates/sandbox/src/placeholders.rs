//! The placeholders a tool's filesystem view made on the host: empty
//! directories under the names a tool must not create in its workspace
//! (`.git`, `.subagent`, `.claude` when absent; see
//! [`crate::isolation::view_protect`]). A mount needs a mount point, and
//! in a writable root that is a directory of the host's. They are removed
//! once the child's whole tree is gone (its mount namespace with it), by
//! the tree's cleanup, whichever way the child ended.
//!
//! Only an empty directory is removed (`rmdir`): whatever else is there
//! now is not ours. A placeholder of the pinned working directory is
//! removed beneath that directory's descriptor, never by a path that a
//! tool could have swapped.

use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::fcntl::{OFlag, open};
use nix::sys::stat::Mode;
use nix::unistd::{UnlinkatFlags, unlinkat};

/// The placeholders of one child, to remove when its tree is gone.
#[derive(Debug, Default)]
pub(crate) struct Placeholders {
    /// The directory each lies in, and its name.
    entries: Vec<(PathBuf, OsString)>,
    /// The pinned working directory and its descriptor.
    cwd: Option<(PathBuf, OwnedFd)>,
}

impl Placeholders {
    /// The placeholders at `paths`; `cwd_fd`, the descriptor of `cwd`
    /// when the child enters it by descriptor, is duplicated for the
    /// removal of those that lie in it.
    pub(crate) fn new(paths: Vec<PathBuf>, cwd: &Path, cwd_fd: Option<&OwnedFd>) -> Self {
        let entries: Vec<(PathBuf, OsString)> = paths
            .into_iter()
            .filter_map(|p| Some((p.parent()?.to_owned(), p.file_name()?.to_owned())))
            .collect();
        let in_cwd = entries.iter().any(|(dir, _)| dir == cwd);
        let cwd = cwd_fd
            .filter(|_| in_cwd)
            .and_then(|fd| fd.try_clone().ok())
            .map(|fd| (cwd.to_owned(), fd));
        Self { entries, cwd }
    }

    /// Removes each placeholder that is still an empty directory.
    /// Blocking (a few syscalls); errors are ignored: what cannot be
    /// removed is not empty, gone already, or not ours to remove.
    pub(crate) fn remove(self) {
        for (dir, name) in &self.entries {
            let opened;
            let dir_fd = match &self.cwd {
                Some((cwd, fd)) if cwd == dir => fd.as_fd(),
                _ => {
                    let flags =
                        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
                    let Ok(fd) = open(dir.as_path(), flags, Mode::empty()) else {
                        continue;
                    };
                    opened = fd;
                    opened.as_fd()
                }
            };
            let _ = unlinkat(dir_fd, name.as_os_str(), UnlinkatFlags::RemoveDir);
        }
    }
}
