//! The workspace a run was admitted with, held by a directory descriptor.
//!
//! The supervisor decides a run's workspace once, at admission, and starts
//! the worker in that directory by its descriptor. Its path may later lead
//! elsewhere: a tool process of another run in a parent workspace can
//! rename the directory and put a symlink to anywhere in its place. A
//! [`WorkspacePin`] is the directory itself: process tools run in it (and
//! their sandbox binds it) through the descriptor, and before every call
//! [`WorkspacePin::check`] refuses to go on when the path no longer names
//! it, since the file tools and the disk measurement go by the path.
//!
//! It opens one directory and compares identities; it never changes
//! anything.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;

use rustix::fs::{Mode, OFlags};

/// The workspace's directory, open, and its identity.
#[derive(Debug, Clone)]
pub struct WorkspacePin {
    fd: Arc<OwnedFd>,
    dev: u64,
    ino: u64,
}

impl WorkspacePin {
    /// This process's working directory: where the supervisor started the
    /// worker, by the descriptor it admitted.
    pub fn current_dir() -> io::Result<Self> {
        Self::open(Path::new("."))
    }

    /// The directory `path` leads to now.
    pub fn open(path: &Path) -> io::Result<Self> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::open(path, flags, Mode::empty())?;
        let stat = rustix::fs::fstat(&fd)?;
        Ok(Self {
            fd: Arc::new(fd),
            dev: stat.st_dev,
            ino: stat.st_ino,
        })
    }

    /// The directory, open for reading.
    pub fn fd(&self) -> &Arc<OwnedFd> {
        &self.fd
    }

    /// A descriptor of its own, for a child to enter the directory by.
    pub fn duplicate(&self) -> io::Result<OwnedFd> {
        self.fd.as_fd().try_clone_to_owned()
    }

    /// Whether `path` still leads to this directory; when not, what the
    /// model is told.
    pub fn check(&self, path: &Path) -> Result<(), String> {
        let now = rustix::fs::stat(path).ok();
        match now {
            Some(stat) if stat.st_dev == self.dev && stat.st_ino == self.ino => Ok(()),
            _ => Err(format!(
                "the workspace {} was moved or replaced after this run started (its path now \
                 leads to another directory, or nowhere); this run's tools work only in the \
                 directory it was started in, so they stop here: tell the user, who can start \
                 a new run",
                path.display()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_swapped_for_a_symlink_is_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let pin = WorkspacePin::open(&ws).unwrap();
        assert_eq!(pin.check(&ws), Ok(()));
        std::fs::rename(&ws, dir.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(&outside, &ws).unwrap();
        let refused = pin.check(&ws).unwrap_err();
        assert!(refused.contains("moved or replaced"), "{refused}");
        // The pin still holds the directory the run started in.
        let held = rustix::fs::fstat(pin.fd().as_fd()).unwrap();
        let moved = std::fs::metadata(dir.path().join("moved")).unwrap();
        assert_eq!(held.st_ino, std::os::unix::fs::MetadataExt::ino(&moved));
    }
}
