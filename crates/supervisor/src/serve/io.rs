//! The two pipes of `serve --stdio`, bounded against a client that sends
//! what it should not or does not read what it asked for.
//!
//! In: [`RequestLines`] reads stdin one line at a time with a cap
//! ([`MAX_LINE_BYTES`]): a longer line is reported and skipped up to its
//! newline without being kept, so a client that never sends one costs
//! nothing. Out: [`Output`] is the one writer of stdout, a thread of its
//! own behind a queue of at most [`OUTPUT_QUEUE_BYTES`]; when the queue is
//! full, senders wait, and the server reads no further request until the
//! client reads ([`Output::wait_for_room`]): backpressure, not memory
//! growth. Progress notifications are a view and are dropped instead of
//! waited for ([`Output::offer`]).
//!
//! This module must not parse requests or decide answers: it moves bytes.

use std::io::{ErrorKind, Write};
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Longest request line, bytes (16 MiB, as `serve --mcp`'s transport):
/// a spawn's tasks and output schema fit many times over.
pub(super) const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Responses and notifications queued for stdout while the client does
/// not read, bytes (8 MiB): thousands of ordinary answers, and a bound on
/// what a client that stops reading can make the server hold.
pub(super) const OUTPUT_QUEUE_BYTES: usize = 8 * 1024 * 1024;

/// Room the queue must have before the next request line is read, bytes
/// (64 KiB): the answer to a `status` or `list` usually fits.
const READ_ROOM_BYTES: usize = 64 * 1024;

/// What one read of stdin gave.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum ReadLine {
    /// A line without its newline (the last one may have had none).
    Line(Vec<u8>),
    /// A line longer than the cap, skipped up to its newline; its length.
    TooLong {
        /// Bytes of the line (without the newline) that were skipped.
        bytes: usize,
    },
    /// stdin is closed.
    Eof,
}

/// Lines of a reader, each at most `max` bytes.
pub(super) struct RequestLines<R> {
    read: BufReader<R>,
    max: usize,
    line: Vec<u8>,
}

impl<R: AsyncRead + Unpin> RequestLines<R> {
    pub(super) fn new(read: R, max: usize) -> Self {
        Self {
            read: BufReader::new(read),
            max,
            line: Vec::new(),
        }
    }

    /// The next line. Only what fits under the cap is ever kept: the rest
    /// of a longer line is consumed from the reader's buffer and dropped.
    pub(super) async fn next(&mut self) -> std::io::Result<ReadLine> {
        let mut skipped: Option<usize> = None;
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(match skipped {
                    Some(bytes) => ReadLine::TooLong { bytes },
                    None if self.line.is_empty() => ReadLine::Eof,
                    None => ReadLine::Line(std::mem::take(&mut self.line)),
                });
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let body = newline.unwrap_or(available.len());
            match &mut skipped {
                Some(bytes) => *bytes = bytes.saturating_add(body),
                None if self.line.len() + body > self.max => {
                    skipped = Some(self.line.len() + body);
                    // The buffer a too-long line grew goes too.
                    self.line = Vec::new();
                }
                None => self.line.extend_from_slice(&available[..body]),
            }
            let consumed = newline.map_or(body, |n| n + 1);
            self.read.consume(consumed);
            if newline.is_some() {
                return Ok(match skipped {
                    Some(bytes) => ReadLine::TooLong { bytes },
                    None => ReadLine::Line(std::mem::take(&mut self.line)),
                });
            }
        }
    }
}

/// A line on its way to stdout and the queue room it holds until written.
type Queued = (String, OwnedSemaphorePermit);

/// The one writer of stdout: a thread of its own, so a client that reads
/// slowly blocks only this thread, never the runtime that runs the jobs;
/// and a bounded queue in front of it.
#[derive(Clone)]
pub(super) struct Output {
    tx: std::sync::mpsc::Sender<Queued>,
    /// Free bytes of the queue: a queued line holds as many as it is long
    /// (at most all of them), until it is written.
    room: Arc<Semaphore>,
    done: Arc<std::sync::Mutex<Option<std::thread::JoinHandle<()>>>>,
}

impl Output {
    pub(super) fn start() -> Self {
        let (tx, rx) = std::sync::mpsc::channel::<Queued>();
        let thread = std::thread::spawn(move || {
            while let Ok((line, room)) = rx.recv() {
                if let Err(e) = write_stdout(&line) {
                    tracing::warn!(error = %e, "cannot write to stdout");
                }
                drop(room);
            }
        });
        Self {
            tx,
            room: Arc::new(Semaphore::new(OUTPUT_QUEUE_BYTES)),
            done: Arc::new(std::sync::Mutex::new(Some(thread))),
        }
    }

    /// Queues `line`, waiting while the queue is full.
    pub(super) async fn send(&self, line: String) {
        let Ok(room) = Arc::clone(&self.room)
            .acquire_many_owned(cost(line.len()))
            .await
        else {
            return;
        };
        // The writer ends only after close(); nothing is sent after that.
        let _ = self.tx.send((line, room));
    }

    /// Queues `line` when there is room now; drops it otherwise (for
    /// progress, which the next notification or `status` supersedes).
    pub(super) fn offer(&self, line: String) {
        if let Ok(room) = Arc::clone(&self.room).try_acquire_many_owned(cost(line.len())) {
            let _ = self.tx.send((line, room));
        }
    }

    /// Returns once the queue has room for an ordinary answer: the server
    /// calls it before reading each request, so a client that does not
    /// read gets no further request read. Logs when it has to wait.
    pub(super) async fn wait_for_room(&self) {
        let need = cost(READ_ROOM_BYTES);
        if self.room.available_permits() >= READ_ROOM_BYTES {
            return;
        }
        tracing::info!(
            queued_bytes = OUTPUT_QUEUE_BYTES - self.room.available_permits(),
            "stdout is not being read: reading no further request until the client reads"
        );
        if let Ok(room) = self.room.acquire_many(need).await {
            drop(room);
        }
        tracing::info!("the client reads again: reading requests");
    }

    /// Waits until every line sent is written. Every other clone must be
    /// gone first (the thread ends when the last sender drops).
    pub(super) fn close(self) {
        let thread = self
            .done
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        drop(self);
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

/// Writes `line` and a newline to stdout; a closed stdout is not an error
/// (the client is gone; what its runs produced is in their session files).
fn write_stdout(line: &str) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(line.as_bytes())
        .and_then(|()| stdout.write_all(b"\n"))
        .and_then(|()| stdout.flush());
    match written {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// The queue room a line of `len` bytes takes: its length and newline, at
/// most the whole queue (a longer line waits for an empty queue).
fn cost(len: usize) -> u32 {
    let bytes = len.saturating_add(1).min(OUTPUT_QUEUE_BYTES);
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

#[cfg(test)]
#[path = "io_tests.rs"]
mod tests;
