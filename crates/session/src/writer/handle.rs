//! A session file's descriptor between its lines: held open while the
//! process holds fewer than [`HELD_SESSION_FILES`] of them, else closed
//! after each line and opened again for the next.
//!
//! Why: the supervisor's descriptors per live worker are what bounds how
//! many workers one process holds (`batch -j 5000` against an open-files
//! limit of 20,000). A held file costs one per worker; the cap makes it one
//! per worker for the first few hundred and none after, for two syscalls a
//! line (an `open` and a `close`) beside the line's `write`. The order of a
//! file's lines and their durability do not change: the same single writer
//! appends each whole line with one `write_all`, and fsyncs lifecycle lines
//! on whichever descriptor wrote them.
//!
//! A reopened path must still be the file that was created: the open does
//! not follow a symbolic link, does not block on a FIFO, and the file's
//! device and inode must match, else the file's writing fails as a write
//! error would (its run reports it), and nothing is written elsewhere.

use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use subagent_protocol::session::SessionLine;

use super::SessionWriterError;
use super::chained::FileChain;
use crate::untrusted_file::{FileIdentity, UntrustedFileError, open_append_same};

/// Session files the process keeps open between lines at most. A few
/// hundred keeps every run of an ordinary batch (`-j` up to 256) on a held
/// descriptor, and a batch of thousands under its open-files limit.
pub const HELD_SESSION_FILES: usize = 256;

/// Session files held open now, across every writer thread.
static HELD: AtomicUsize = AtomicUsize::new(0);

/// An open session file counted against [`HELD_SESSION_FILES`].
#[derive(Debug)]
struct Held(File);

impl Held {
    /// `file`, kept if there is room under the cap; else closed.
    fn try_hold(file: File) -> Option<Self> {
        HELD.fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
            (held < HELD_SESSION_FILES).then_some(held + 1)
        })
        .ok()
        .map(|_| Self(file))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        HELD.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One session file as its writer holds it between lines.
#[derive(Debug)]
pub(super) struct FileHandle {
    identity: FileIdentity,
    /// The file's chain, shared with anyone else in this process who
    /// appends to it.
    chain: Arc<FileChain>,
    open: Option<Held>,
}

impl FileHandle {
    /// The file just created at its path.
    pub(super) fn new(file: File) -> io::Result<Self> {
        let identity = FileIdentity::of(&file)?;
        Ok(Self {
            identity,
            chain: FileChain::created(identity),
            open: Held::try_hold(file),
        })
    }

    /// Appends `line`, chained, to the file at `path`.
    pub(super) fn append(
        &mut self,
        path: &Path,
        line: &SessionLine,
    ) -> Result<(), SessionWriterError> {
        let chain = Arc::clone(&self.chain);
        self.with_file(path, |file| chain.append(file, path, line))
    }

    /// Runs `write` on the file at `path`, opening it again first when it
    /// is not held; keeps it afterwards if there is room now.
    pub(super) fn with_file<T>(
        &mut self,
        path: &Path,
        write: impl FnOnce(&mut File) -> Result<T, SessionWriterError>,
    ) -> Result<T, SessionWriterError> {
        if let Some(Held(file)) = &mut self.open {
            return write(file);
        }
        let mut file = self
            .reopen(path)
            .map_err(|source| SessionWriterError::Write {
                path: path.to_owned(),
                source,
            })?;
        let written = write(&mut file)?;
        self.open = Held::try_hold(file);
        Ok(written)
    }

    /// Whether the descriptor is held between lines (for the tests).
    #[cfg(test)]
    pub(super) fn is_held(&self) -> bool {
        self.open.is_some()
    }

    /// Closes the descriptor as if the cap had been reached (for the tests).
    #[cfg(test)]
    pub(super) fn let_go(&mut self) {
        self.open = None;
    }

    fn reopen(&self, path: &Path) -> io::Result<File> {
        match open_append_same(path, self.identity) {
            Ok(file) => Ok(file),
            Err(UntrustedFileError::Replaced { .. }) => Err(io::Error::other(
                "the session file was replaced since it was created (the path names another \
                 file now); its writing stops here, and nothing is written to the new file",
            )),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
#[path = "handle_tests.rs"]
mod tests;
