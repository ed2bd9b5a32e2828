//! The single writer of a session file.
//!
//! Each file has exactly one writer; everyone else sends it lines. Each line
//! is serialized whole and written with one `write_all` to a file opened
//! append-only, flushed per line, and fsynced after lifecycle lines (the
//! header and `agent_event`), so a crash loses at most the progress lines
//! after the last lifecycle record and never tears a lifecycle record.
//!
//! The writers are plain OS threads, not tasks on the async runtime: the
//! writes and fsyncs block for as long as the disk takes, and the CLI's
//! runtime has two threads that must never wait on a disk. Being plain
//! threads, they also need no runtime to finish a file, so a run dropped
//! half-way can still hand its writer a closing line from a `Drop`
//! ([`SessionWriter::finish_blocking`]).
//!
//! The threads are a small process-wide pool (`POOL_THREADS`), not one per
//! file: `batch -j 1000` keeps 1,000 session files open at once, and a thread
//! per file held 8 MiB and more (about 8 KiB each of resident stack and TLS,
//! plus malloc arenas) in a supervisor that must stay under 64 MiB. A file is
//! owned by one pool thread from [`SessionWriter::create`] to its close, which
//! keeps one writer per file and its lines in order; the price is that the
//! writes and fsyncs of the files sharing a thread wait for each other. A few
//! threads keep one slow fsync from stalling every run; more would cost memory
//! for little, as fsyncs on one filesystem largely queue on its journal
//! anyway. Threads start when a file needs one and then live as long as the
//! process, so a process that never writes a session starts none.
//!
//! A file's failure is its own: a write error (a full disk) stops that file's
//! writer and is reported by its close, and the other files on the thread go
//! on.
//!
//! Appends to a parent's file block too: [`append_to_parent`] runs them on
//! the runtime's blocking pool.
//!
//! Every line is chained ([`crate::chain`]): sealed onto the line
//! before it in its file, whoever in this process appends it
//! ([`chained`]). A file is created only with the key at hand, so no
//! session file of this version starts unchained.
//!
//! Sanitizing is the caller's job: this module writes what it is given.

use std::fs::{File, OpenOptions};
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, mpsc};

use subagent_protocol::session::SessionLine;
use tokio::sync::{Notify, Semaphore};

use chained::FileChain;
use pool::{Event, OpenFile, Pool};

use super::key::KeyError;
use crate::untrusted_file::{
    FileIdentity, UntrustedFileError, open_append_existing, open_append_same,
};

/// Lines queued for one file before its `append` waits. Bounded so a
/// flooding worker slows down instead of growing memory; per file, so it
/// waits for its own lines, never for another run's.
const CHANNEL_CAPACITY: usize = 1024;

/// Writer threads in the process at most; see the module doc for why few.
const POOL_THREADS: usize = 4;

/// The writers of every session file in the process.
static POOL: Pool = Pool::new("session-writer", POOL_THREADS);

/// Failures of the session writer.
#[derive(Debug, thiserror::Error)]
pub enum SessionWriterError {
    /// The file or its directory could not be created.
    #[error(
        "create session file {path}: {source}; check that the sessions dir is writable or pass --sessions-dir"
    )]
    Create {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A write, flush or fsync failed.
    #[error("write session file {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A line could not be serialized.
    #[error("serialize session line: {0}")]
    Serialize(#[from] serde_json::Error),
    /// The file's writer is gone (it failed earlier, or panicked).
    #[error("session writer stopped")]
    Stopped,
    /// The writer thread could not be started.
    #[error("start the session writer thread: {0}")]
    Thread(io::Error),
    /// The key that chains session files cannot be had.
    #[error("{0}; session files are chained with it, so none is written without it")]
    Key(KeyError),
    /// A file to append to is not one a line may go to (a link, a FIFO, a
    /// device, too large).
    #[error(transparent)]
    Untrusted(#[from] UntrustedFileError),
}

/// Handle to the writer of one session file. Dropping it closes the file's
/// queue: its writer writes what was queued and closes the file.
#[derive(Debug)]
pub struct SessionWriter {
    path: PathBuf,
    queue: Queue,
    outcome: Arc<Outcome>,
}

impl SessionWriterError {
    /// True when creating failed because the file already exists (a run
    /// id collision: pick another id).
    pub fn already_exists(&self) -> bool {
        matches!(self, SessionWriterError::Create { source, .. } if source.kind() == io::ErrorKind::AlreadyExists)
    }
}

impl SessionWriter {
    /// Creates the file (and its directories) and hands it to a writer
    /// thread. Refuses to overwrite: a session file is never truncated.
    pub fn create(path: &Path) -> Result<Self, SessionWriterError> {
        let create_err = |source| SessionWriterError::Create {
            path: path.to_owned(),
            source,
        };
        // Before the file: a run whose lines could not be chained leaves
        // no file at all.
        super::key::session_key().map_err(SessionWriterError::Key)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(create_err)?;
        }
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(path)
            .map_err(create_err)?;
        Self::start(&POOL, file, path)
    }

    /// Hands an open `file` to a thread of `pool`.
    fn start(pool: &Pool, file: File, path: &Path) -> Result<Self, SessionWriterError> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let slots = Arc::new(Semaphore::new(CHANNEL_CAPACITY));
        let outcome = Arc::new(Outcome::default());
        let open = Box::new(OpenFile::new(
            path,
            file,
            Arc::clone(&slots),
            Arc::clone(&outcome),
        ));
        let tx = pool.assign()?;
        // Fails only if the thread died outside any one file's writing,
        // which `serve` guards against.
        tx.send(Event::Open { id, file: open })
            .map_err(|_| SessionWriterError::Stopped)?;
        Ok(Self {
            path: path.to_owned(),
            queue: Queue {
                id,
                tx,
                slots,
                last: None,
            },
            outcome,
        })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues one line. Fails only when the writer has stopped.
    pub async fn append(&self, line: SessionLine) -> Result<(), SessionWriterError> {
        let queue = &self.queue;
        // The permit travels with the line and is released once it is
        // written: at most CHANNEL_CAPACITY lines of this file are queued.
        let slot = Arc::clone(&queue.slots)
            .acquire_owned()
            .await
            .map_err(|_| SessionWriterError::Stopped)?;
        queue
            .tx
            .send(Event::Line {
                id: queue.id,
                line: Box::new(line),
                _slot: slot,
            })
            .map_err(|_| SessionWriterError::Stopped)
    }

    /// Writes everything queued and closes the file; returns the line count
    /// or the first error the writer met.
    pub async fn close(self) -> Result<u64, SessionWriterError> {
        let SessionWriter { queue, outcome, .. } = self;
        drop(queue);
        outcome.wait().await
    }

    /// Closes the queue with `last` as the file's last line, then waits for
    /// the writer as [`Self::close`] does. The line is handed over before
    /// this returns its future: dropping the future still gets it written.
    pub fn close_with(
        mut self,
        last: SessionLine,
    ) -> impl Future<Output = Result<u64, SessionWriterError>> + Send {
        self.queue.last = Some(last);
        self.close()
    }

    /// [`Self::close_with`] for code that cannot wait asynchronously (a
    /// `Drop`): blocks the calling thread until the writer has written
    /// everything queued and `last`, and closed the file. Needs no runtime,
    /// and does not mind being called on one.
    pub fn finish_blocking(mut self, last: SessionLine) -> Result<u64, SessionWriterError> {
        self.queue.last = Some(last);
        let SessionWriter { queue, outcome, .. } = self;
        drop(queue);
        outcome.wait_blocking()
    }
}

/// The producers' end of one file's queue. Dropping it is what closes the
/// file, so a handle dropped without a close (or a dropped close future)
/// still gets everything queued, and its last line, written.
#[derive(Debug)]
struct Queue {
    id: u64,
    tx: mpsc::Sender<Event>,
    /// Free places in the queue; closed by the writer once it has failed.
    slots: Arc<Semaphore>,
    /// Written after every queued line, when the queue closes.
    last: Option<SessionLine>,
}

impl Drop for Queue {
    fn drop(&mut self) {
        // Sent after every line of this queue on the same channel, so it
        // arrives after them. If the thread is gone, the file was dropped
        // with it and has reported `Stopped` already.
        let _ = self.tx.send(Event::Close {
            id: self.id,
            last: self.last.take().map(Box::new),
        });
    }
}

/// How a file's writing ended, handed from its thread to whoever closes it,
/// be it awaiting ([`Self::wait`]) or blocked ([`Self::wait_blocking`]).
#[derive(Debug, Default)]
struct Outcome {
    result: Mutex<Option<Result<u64, SessionWriterError>>>,
    ready: Condvar,
    notify: Notify,
}

impl Outcome {
    fn set(&self, result: Result<u64, SessionWriterError>) {
        *self.result.lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
        self.ready.notify_all();
        // `notify_one` keeps a permit when nobody waits yet, so a waiter
        // that checked just before this still wakes.
        self.notify.notify_one();
    }

    fn take(&self) -> Option<Result<u64, SessionWriterError>> {
        self.result
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    async fn wait(&self) -> Result<u64, SessionWriterError> {
        loop {
            if let Some(result) = self.take() {
                return result;
            }
            self.notify.notified().await;
        }
    }

    fn wait_blocking(&self) -> Result<u64, SessionWriterError> {
        let mut result = self.result.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(result) = result.take() {
                return result;
            }
            result = self
                .ready
                .wait(result)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Appends one lifecycle line to a parent's session file (which this
/// process does not own): opened without following a link, a regular file
/// only, never created; the line chained onto the file's own chain (shared
/// with its writer when this process holds one), written with one
/// `write_all` on an `O_APPEND` file, then fsynced. Runs on the runtime's
/// blocking pool; see [`append_to_parent_blocking`].
pub async fn append_to_parent(parent: &Path, line: &SessionLine) -> Result<(), SessionWriterError> {
    let (parent, line) = (parent.to_owned(), line.clone());
    let path = parent.clone();
    tokio::task::spawn_blocking(move || append_to_parent_blocking(&parent, &line))
        .await
        .map_err(|e| SessionWriterError::Write {
            path,
            source: io::Error::other(e),
        })?
}

/// [`append_to_parent`] on the calling thread, for code that cannot wait
/// asynchronously (a `Drop`).
pub fn append_to_parent_blocking(
    parent: &Path,
    line: &SessionLine,
) -> Result<(), SessionWriterError> {
    let mut opened = open_append_existing(parent)?;
    FileChain::existing(opened.identity).append(&mut opened.file, parent, line)
}

/// [`append_to_parent_blocking`] to a file that must still be `expected`
/// (the one read before deciding to append): recovery appends only to the
/// file it verified.
pub fn append_to_same_blocking(
    path: &Path,
    expected: FileIdentity,
    line: &SessionLine,
) -> Result<(), SessionWriterError> {
    let mut file = open_append_same(path, expected)?;
    FileChain::existing(expected).append(&mut file, path, line)
}

mod chained;
mod handle;
mod pool;

pub use handle::HELD_SESSION_FILES;

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
