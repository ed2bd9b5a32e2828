//! A server's own session file, opened and locked: the lock tells a live
//! server's file from a dead one's ([`super::Jobs`]). The file is opened
//! without following a link or blocking on a FIFO, and must be a regular
//! file: a link planted in `<sessions dir>/serve/` is not followed to
//! whatever it names.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use nix::fcntl::{Flock, OFlag};

/// Opens the server file at `path` (made first with `create`, and its
/// directory), refusing a link, a FIFO or anything but a regular file, and
/// takes its flock without waiting: a lock held by a live server is
/// `ErrorKind::WouldBlock`.
pub(super) fn open_locked(path: &Path, create: bool) -> std::io::Result<Flock<File>> {
    if create && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let file = OpenOptions::new()
        .create(create)
        .append(true)
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK).bits())
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other(
            "not a regular file: a server's session file is one",
        ));
    }
    // nix's flock rather than std's File::try_lock: the crate's MSRV predates it.
    Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
        .map_err(|(_, errno)| errno.into())
}
