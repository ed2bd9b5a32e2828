//! The lock that says a live record's writer lives: a POSIX record lock
//! (`fcntl` `F_SETLK`) over the whole file, held by the supervisor for the
//! run's life, and asked after by readers with `F_GETLK`, which names the
//! process holding it.
//!
//! Why POSIX locks and not `flock`: `F_GETLK` tells who holds the lock, so
//! a reader can check it is the process the record names, not whoever
//! planted or copied the file and locked it themselves. The kernel drops
//! the lock when its process dies, by SIGKILL too. Their one trap (closing
//! any descriptor of the file drops the process's lock) is kept away by
//! opening a record in its writer only once, and never elsewhere in that
//! process.
//!
//! Only the locking calls; what a record says is [`super::record`]'s.

use std::os::fd::AsFd;

use nix::fcntl::{FcntlArg, fcntl};
use nix::libc;

/// A whole-file lock request of `kind` (`F_WRLCK`, `F_UNLCK`).
fn whole_file(kind: libc::c_short) -> libc::flock {
    libc::flock {
        l_type: kind,
        l_whence: libc::SEEK_SET as libc::c_short,
        l_start: 0,
        l_len: 0,
        l_pid: 0,
    }
}

/// Takes the write lock on `file` (open for writing) without waiting.
pub fn lock(file: &impl AsFd) -> std::io::Result<()> {
    let request = whole_file(libc::F_WRLCK as libc::c_short);
    fcntl(file.as_fd(), FcntlArg::F_SETLK(&request))
        .map(|_| ())
        .map_err(std::io::Error::from)
}

/// The pid of the process holding a lock on `file` (open for reading is
/// enough), as this process's pid namespace sees it; `None` when no
/// process holds one. A holder in another pid namespace shows as pid 0.
pub fn holder(file: &impl AsFd) -> std::io::Result<Option<u32>> {
    let mut asked = whole_file(libc::F_WRLCK as libc::c_short);
    fcntl(file.as_fd(), FcntlArg::F_GETLK(&mut asked)).map_err(std::io::Error::from)?;
    if asked.l_type == libc::F_UNLCK as libc::c_short {
        return Ok(None);
    }
    Ok(Some(u32::try_from(asked.l_pid).unwrap_or(0)))
}
