//! A server's own session file, opened and locked: the lock tells a live
//! server's file from a dead one's ([`super::Jobs`]). The file is opened
//! as untrusted input, without following a link or blocking on a FIFO, and
//! must be a regular file: a link planted in `<sessions dir>/serve/` is not
//! followed to whatever it names. It only opens and locks; what the file
//! says is read elsewhere.

use std::fs::File;
use std::path::Path;

use nix::fcntl::Flock;

use crate::untrusted_file::{open_append, open_append_existing};

/// Opens the server file at `path` (made first with `create`, and its
/// directory), refusing a link, a FIFO or anything but a regular file
/// ([`crate::untrusted_file`]), and takes its flock without waiting: a
/// lock held by a live server is `ErrorKind::WouldBlock`.
pub(super) fn open_locked(path: &Path, create: bool) -> std::io::Result<Flock<File>> {
    if create && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let opened = if create {
        open_append(path)?
    } else {
        open_append_existing(path)?
    };
    // nix's flock rather than std's File::try_lock: the crate's MSRV predates it.
    Flock::lock(opened.file, nix::fcntl::FlockArg::LockExclusiveNonblock)
        .map_err(|(_, errno)| errno.into())
}
