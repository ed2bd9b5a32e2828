//! The threads that write session files: a pool of at most a few, each
//! holding many files, each file held by one thread from its open to its
//! close (why a pool, and what it costs: the parent module's doc).
//!
//! A thread's loop takes one file's events in the order they were sent, so
//! a file's lines are written in order; what fails or panics on one file
//! stops that file alone.

use std::collections::HashMap;
use std::fs::File;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};

use subagent_protocol::session::SessionLine;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::handle::FileHandle;
use super::{Outcome, SessionWriterError};

/// Stack of a writer thread, in bytes. Serializing one line is all it does;
/// the deepest line is a tool call's `args`, which `serde_json` parses no
/// deeper than 128 levels.
pub(super) const WRITER_STACK_BYTES: usize = 256 * 1024;

/// What a writer thread is asked to do, for one of its files.
pub(super) enum Event {
    Open {
        id: u64,
        file: Box<OpenFile>,
    },
    Line {
        id: u64,
        line: Box<SessionLine>,
        _slot: OwnedSemaphorePermit,
    },
    Close {
        id: u64,
        last: Option<Box<SessionLine>>,
    },
}

/// A session file as its writer thread holds it.
pub(super) struct OpenFile {
    path: PathBuf,
    /// The first error once writing has failed: later lines are dropped and
    /// the close reports it.
    file: Result<FileHandle, SessionWriterError>,
    written: u64,
    slots: Arc<Semaphore>,
    /// Taken once the outcome is reported.
    outcome: Option<Arc<Outcome>>,
}

impl OpenFile {
    /// `file` at `path`, its queue's free places, where its end is told.
    pub(super) fn new(
        path: &Path,
        file: File,
        slots: Arc<Semaphore>,
        outcome: Arc<Outcome>,
    ) -> Self {
        let file = FileHandle::new(file).map_err(|source| SessionWriterError::Write {
            path: path.to_owned(),
            source,
        });
        if file.is_err() {
            slots.close();
        }
        Self {
            path: path.to_owned(),
            file,
            written: 0,
            slots,
            outcome: Some(outcome),
        }
    }

    fn write(&mut self, line: &SessionLine) {
        let Ok(file) = &mut self.file else { return };
        let path = &self.path;
        match file.append(path, line) {
            Ok(()) => self.written += 1,
            Err(e) => {
                // Later appends fail at once instead of queueing lines
                // that would be dropped.
                self.slots.close();
                self.file = Err(e);
            }
        }
    }

    fn finish(mut self, last: Option<Box<SessionLine>>) {
        if let Some(line) = last {
            self.write(&line);
        }
        let file = std::mem::replace(&mut self.file, Err(SessionWriterError::Stopped));
        if let Some(outcome) = self.outcome.take() {
            outcome.set(file.map(|_| self.written));
        }
    }
}

impl Drop for OpenFile {
    /// A file dropped unfinished (its writer panicked): whoever closes it
    /// must not wait forever.
    fn drop(&mut self) {
        if let Some(outcome) = self.outcome.take() {
            self.slots.close();
            outcome.set(Err(SessionWriterError::Stopped));
        }
    }
}

/// Writer threads, started on demand up to a cap.
pub(super) struct Pool {
    /// Thread names are this and a number.
    name: &'static str,
    max_threads: usize,
    /// Stack of a new thread, bytes ([`WRITER_STACK_BYTES`]; the tests make
    /// it impossible to give, to see a thread fail to start).
    pub(super) stack_bytes: AtomicUsize,
    pub(super) threads: Mutex<Vec<PoolThread>>,
}

pub(super) struct PoolThread {
    tx: mpsc::Sender<Event>,
    /// Files it holds open: the least busy thread gets the next file.
    files: Arc<AtomicUsize>,
}

impl Pool {
    pub(super) const fn new(name: &'static str, max_threads: usize) -> Self {
        Self {
            name,
            max_threads,
            stack_bytes: AtomicUsize::new(WRITER_STACK_BYTES),
            threads: Mutex::new(Vec::new()),
        }
    }

    /// The thread for a new file: an idle one, else a new one while under
    /// the cap, else the one holding the fewest files. A thread that cannot
    /// be started fails the file only when no thread runs at all.
    pub(super) fn assign(&self) -> Result<mpsc::Sender<Event>, SessionWriterError> {
        let mut threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        let least_busy = |threads: &[PoolThread]| {
            threads
                .iter()
                .enumerate()
                .min_by_key(|(_, t)| t.files.load(Ordering::Relaxed))
                .map(|(at, t)| (at, t.files.load(Ordering::Relaxed)))
        };
        let at = match least_busy(&threads) {
            Some((at, files)) if files == 0 || threads.len() >= self.max_threads => at,
            busiest_or_none => match self.start_thread(threads.len()) {
                Ok(thread) => {
                    threads.push(thread);
                    threads.len() - 1
                }
                Err(e) => busiest_or_none.map(|(at, _)| at).ok_or(e)?,
            },
        };
        let thread = &threads[at];
        thread.files.fetch_add(1, Ordering::Relaxed);
        Ok(thread.tx.clone())
    }

    fn start_thread(&self, index: usize) -> Result<PoolThread, SessionWriterError> {
        let (tx, rx) = mpsc::channel();
        let files = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&files);
        std::thread::Builder::new()
            // No separator: a thread's OS name (`ps -L`, `top -H`) keeps 15
            // bytes, and "session-writer" is 14 of them.
            .name(format!("{}{index}", self.name))
            .stack_size(self.stack_bytes.load(Ordering::Relaxed))
            .spawn(move || serve(&rx, &counted))
            .map_err(SessionWriterError::Thread)?;
        Ok(PoolThread { tx, files })
    }
}

/// A writer thread's loop: runs until every sender is gone, which for the
/// process-wide pool is never.
fn serve(rx: &mpsc::Receiver<Event>, open_files: &AtomicUsize) {
    let mut files: HashMap<u64, Box<OpenFile>> = HashMap::new();
    while let Ok(event) = rx.recv() {
        match event {
            Event::Open { id, file } => {
                files.insert(id, file);
            }
            Event::Line { id, line, _slot } => {
                let Some(file) = files.get_mut(&id) else {
                    continue;
                };
                // A panic on one file's line must not take down the other
                // files on this thread: that file alone stops.
                if catch_unwind(AssertUnwindSafe(|| file.write(&line))).is_err() {
                    files.remove(&id);
                }
            }
            Event::Close { id, last } => {
                // Every opened file is closed exactly once, even one
                // dropped after a panic.
                open_files.fetch_sub(1, Ordering::Relaxed);
                if let Some(file) = files.remove(&id) {
                    // Dropped unfinished on a panic, which reports `Stopped`.
                    let _ = catch_unwind(AssertUnwindSafe(|| file.finish(last)));
                }
            }
        }
    }
}
