//! Opening beneath a directory descriptor, never following a symlink, and
//! the times that tell whether a path changed after a run started.
//!
//! Small wrappers over rustix; they decide nothing.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags, Stat};

/// `rel` beneath `root`, opened with `flags`: no `..` out, no symlink, no
/// magic link on the way.
pub(crate) fn open(
    root: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    mode: Mode,
) -> io::Result<OwnedFd> {
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    rustix::fs::openat2(
        root,
        rel,
        flags | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        mode,
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    )
    .map_err(io::Error::from)
}

/// The directory `rel` beneath `root`.
pub(crate) fn open_dir(root: BorrowedFd<'_>, rel: &Path) -> io::Result<OwnedFd> {
    open(root, rel, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
}

/// `lstat` of `name` in `dir`; `None` when absent.
pub(crate) fn stat(dir: impl AsFd, name: &Path) -> io::Result<Option<Stat>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => Ok(Some(stat)),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The kernel's change time of `stat`: set on every write, chmod, rename
/// or link of the inode, and not settable by a process.
pub(crate) fn ctime(stat: &Stat) -> SystemTime {
    let secs = u64::try_from(stat.st_ctime).unwrap_or(0);
    let nanos = u32::try_from(stat.st_ctime_nsec).unwrap_or(0);
    UNIX_EPOCH + Duration::new(secs, nanos)
}

/// The file type bits of a mode.
pub(crate) fn file_type(mode: u32) -> u32 {
    mode & S_IFMT
}

pub(crate) const S_IFMT: u32 = 0o170_000;
pub(crate) const S_IFDIR: u32 = 0o040_000;
pub(crate) const S_IFREG: u32 = 0o100_000;
pub(crate) const S_IFLNK: u32 = 0o120_000;
pub(crate) const S_IFCHR: u32 = 0o020_000;
pub(crate) const S_IFBLK: u32 = 0o060_000;
pub(crate) const S_IFIFO: u32 = 0o010_000;
