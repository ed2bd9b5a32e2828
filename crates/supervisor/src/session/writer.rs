//! The single writer of a session file.
//!
//! One thread owns the file; everyone else sends it lines over a channel.
//! Each line is serialized whole and written with one `write_all` to a file
//! opened append-only, flushed per line, and fsynced after lifecycle lines
//! (the header and `agent_event`), so a crash loses at most the progress
//! lines after the last lifecycle record and never tears a lifecycle record.
//!
//! The owner is a dedicated OS thread, not a task on the async runtime: the
//! writes and fsyncs block for as long as the disk takes, and the CLI's
//! runtime has two threads that must never wait on a disk. Being a plain
//! thread, it also needs no runtime to finish, so a run dropped half-way can
//! still hand it a closing line from a `Drop` ([`SessionWriter::finish_blocking`]).
//! Appends to a parent's file block too: [`append_to_parent`] runs them on
//! the runtime's blocking pool.
//!
//! Sanitizing is the caller's job: this module writes what it is given.

use std::fs::{File, OpenOptions};
use std::future::Future;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use subagent_protocol::session::SessionLine;
use tokio::sync::{mpsc, oneshot};

/// Lines buffered between producers and the writer thread before `append`
/// waits. Bounded so a flooding worker slows down instead of growing memory.
const CHANNEL_CAPACITY: usize = 1024;

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
    /// The writer thread is gone (it failed earlier, or panicked).
    #[error("session writer stopped")]
    Stopped,
    /// The writer thread could not be started.
    #[error("start the session writer thread: {0}")]
    Thread(io::Error),
}

enum Command {
    Line(Box<SessionLine>),
}

/// The line written after every queued one, once the queue is closed.
type LastLine = Arc<Mutex<Option<SessionLine>>>;

/// Handle to the writer thread of one session file. Dropping it closes the
/// queue: the thread writes what was queued and ends.
#[derive(Debug)]
pub struct SessionWriter {
    path: PathBuf,
    tx: mpsc::Sender<Command>,
    last: LastLine,
    done: oneshot::Receiver<Result<u64, SessionWriterError>>,
    thread: std::thread::JoinHandle<()>,
}

impl SessionWriterError {
    /// True when creating failed because the file already exists (a run
    /// id collision: pick another id).
    pub fn already_exists(&self) -> bool {
        matches!(self, SessionWriterError::Create { source, .. } if source.kind() == io::ErrorKind::AlreadyExists)
    }
}

impl SessionWriter {
    /// Creates the file (and its directories) and starts the writer thread.
    /// Refuses to overwrite: a session file is never truncated.
    pub fn create(path: &Path) -> Result<Self, SessionWriterError> {
        let create_err = |source| SessionWriterError::Create {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(create_err)?;
        }
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(path)
            .map_err(create_err)?;
        let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
        let (report, done) = oneshot::channel();
        let last = LastLine::default();
        let (owned, last_line) = (path.to_owned(), Arc::clone(&last));
        let thread = std::thread::Builder::new()
            .name("session-writer".into())
            .spawn(move || {
                let _ = report.send(write_loop(file, &owned, rx, &last_line));
            })
            .map_err(SessionWriterError::Thread)?;
        Ok(Self {
            path: path.to_owned(),
            tx,
            last,
            done,
            thread,
        })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues one line. Fails only when the writer has stopped.
    pub async fn append(&self, line: SessionLine) -> Result<(), SessionWriterError> {
        self.tx
            .send(Command::Line(Box::new(line)))
            .await
            .map_err(|_| SessionWriterError::Stopped)
    }

    /// Writes everything queued and closes the file; returns the line count
    /// or the first error the writer met.
    pub async fn close(self) -> Result<u64, SessionWriterError> {
        let SessionWriter { tx, done, .. } = self;
        drop(tx);
        done.await.map_err(|_| SessionWriterError::Stopped)?
    }

    /// Closes the queue with `last` as the file's last line, then waits for
    /// the writer as [`Self::close`] does. The line is handed over before
    /// this returns its future: dropping the future still gets it written.
    pub fn close_with(
        self,
        last: SessionLine,
    ) -> impl Future<Output = Result<u64, SessionWriterError>> + Send {
        self.set_last(last);
        self.close()
    }

    /// [`Self::close_with`] for code that cannot wait asynchronously (a
    /// `Drop`): blocks the calling thread until the writer has written
    /// everything queued and `last`, and closed the file.
    pub fn finish_blocking(self, last: SessionLine) -> Result<u64, SessionWriterError> {
        self.set_last(last);
        let SessionWriter {
            tx,
            mut done,
            thread,
            ..
        } = self;
        drop(tx);
        thread.join().map_err(|_| SessionWriterError::Stopped)?;
        done.try_recv().map_err(|_| SessionWriterError::Stopped)?
    }

    fn set_last(&self, last: SessionLine) {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some(last);
    }
}

fn write_loop(
    mut file: File,
    path: &Path,
    mut rx: mpsc::Receiver<Command>,
    last: &LastLine,
) -> Result<u64, SessionWriterError> {
    let mut written = 0u64;
    while let Some(Command::Line(line)) = rx.blocking_recv() {
        write_line(&mut file, path, &line)?;
        written += 1;
    }
    // Every sender is gone, so nothing can be queued behind this line.
    let last = last.lock().unwrap_or_else(PoisonError::into_inner).take();
    if let Some(line) = last {
        write_line(&mut file, path, &line)?;
        written += 1;
    }
    Ok(written)
}

fn write_line(file: &mut File, path: &Path, line: &SessionLine) -> Result<(), SessionWriterError> {
    let mut bytes = serde_json::to_vec(line)?;
    bytes.push(b'\n');
    let io_err = |source| SessionWriterError::Write {
        path: path.to_owned(),
        source,
    };
    file.write_all(&bytes).map_err(io_err)?;
    file.flush().map_err(io_err)?;
    if line.is_lifecycle() {
        file.sync_data().map_err(io_err)?;
    }
    Ok(())
}

/// Appends one lifecycle line to a parent's session file (which this process
/// does not own): one `write_all` of the whole line on an `O_APPEND` file, so
/// it lands whole even if the parent is writing too, then fsync. Runs on the
/// runtime's blocking pool; see [`append_to_parent_blocking`].
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
    let mut file = OpenOptions::new()
        .append(true)
        .open(parent)
        .map_err(|source| SessionWriterError::Create {
            path: parent.to_owned(),
            source,
        })?;
    write_line(&mut file, parent, line)?;
    file.sync_data()
        .map_err(|source| SessionWriterError::Write {
            path: parent.to_owned(),
            source,
        })
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
