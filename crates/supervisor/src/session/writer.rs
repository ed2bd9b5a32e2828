//! The single writer of a session file.
//!
//! One task owns the file; everyone else sends it lines over a channel. Each
//! line is serialized whole and written with one `write_all` to a file opened
//! append-only, flushed per line, and fsynced after lifecycle lines (the
//! header and `agent_event`), so a crash loses at most the progress lines
//! after the last lifecycle record and never tears a lifecycle record.
//!
//! Sanitizing is the caller's job: this module writes what it is given.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use subagent_protocol::session::SessionLine;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Lines buffered between producers and the writer task before `append`
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
    /// The writer task is gone (it failed earlier, or panicked).
    #[error("session writer stopped")]
    Stopped,
}

enum Command {
    Line(Box<SessionLine>),
}

/// Handle to the writer task of one session file.
#[derive(Debug)]
pub struct SessionWriter {
    path: PathBuf,
    tx: mpsc::Sender<Command>,
    task: JoinHandle<Result<u64, SessionWriterError>>,
}

impl SessionWriterError {
    /// True when creating failed because the file already exists (a run
    /// id collision: pick another id).
    pub fn already_exists(&self) -> bool {
        matches!(self, SessionWriterError::Create { source, .. } if source.kind() == io::ErrorKind::AlreadyExists)
    }
}

impl SessionWriter {
    /// Creates the file (and its directories) and starts the writer task.
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
        let owned = path.to_owned();
        let task = tokio::task::spawn_blocking(move || write_loop(file, &owned, rx));
        Ok(Self {
            path: path.to_owned(),
            tx,
            task,
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
        drop(self.tx);
        self.task.await.map_err(|_| SessionWriterError::Stopped)?
    }
}

fn write_loop(
    mut file: File,
    path: &Path,
    mut rx: mpsc::Receiver<Command>,
) -> Result<u64, SessionWriterError> {
    let mut written = 0u64;
    while let Some(Command::Line(line)) = rx.blocking_recv() {
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
/// it lands whole even if the parent is writing too, then fsync.
pub fn append_to_parent(parent: &Path, line: &SessionLine) -> Result<(), SessionWriterError> {
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
