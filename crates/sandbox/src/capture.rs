//! Capped capture of one output stream: keep a head and a rolling tail in
//! memory, count every byte, and kill the tree once the stream passes its
//! hard limit.
//!
//! It keeps reading as long as the pipe is open so the child never blocks on
//! a full pipe; it never holds more than head + tail bytes; it never reads
//! past hard limit + 1 byte (then it closes its end of the pipe, so writers
//! get SIGPIPE even before the kill lands).

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use subagent_protocol::session::Stream;
use tokio::net::unix::pipe;
use tokio::sync::watch;

use crate::exit_watch::HangUpOnDrop;
use crate::kill::{KillHandle, KillReason};

/// Largest read buffer per stream, bytes: one default pipe's worth.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// First read buffer per stream, bytes, allocated only once the pipe has
/// something to read. Most children write little or nothing to stdout and
/// stderr (a worker writes nothing at all), and a supervisor holding a
/// thousand of them would otherwise carry two buffers each for nothing; a
/// buffer that a read fills doubles, up to [`READ_CHUNK_BYTES`].
const FIRST_READ_BYTES: usize = 4 * 1024;

/// What was kept of one stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// The first bytes of the stream.
    pub head: Vec<u8>,
    /// The last bytes after the head.
    pub tail: Vec<u8>,
    /// Bytes read from the pipe in total.
    pub bytes_seen: u64,
    /// Bytes kept (head + tail).
    pub bytes_kept: u64,
    /// True when bytes between head and tail were dropped.
    pub truncated: bool,
}

impl Captured {
    /// Head and tail as text (invalid UTF-8 replaced), with a marker saying
    /// how many bytes were dropped between them.
    pub fn lossy_text(&self) -> String {
        let head = String::from_utf8_lossy(&self.head);
        let tail = String::from_utf8_lossy(&self.tail);
        if self.truncated {
            let omitted = self.bytes_seen.saturating_sub(self.bytes_kept);
            format!("{head}\n[... {omitted} bytes omitted ...]\n{tail}")
        } else {
            format!("{head}{tail}")
        }
    }
}

/// The in-memory head + rolling tail of a stream.
#[derive(Debug)]
pub(crate) struct HeadTail {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    seen: u64,
}

impl HeadTail {
    pub(crate) fn new(head_cap: usize, tail_cap: usize) -> Self {
        Self {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_cap,
            tail_cap,
            seen: 0,
        }
    }

    pub(crate) fn seen(&self) -> u64 {
        self.seen
    }

    pub(crate) fn push(&mut self, chunk: &[u8]) {
        self.seen = self.seen.saturating_add(chunk.len() as u64);
        let to_head = self
            .head_cap
            .saturating_sub(self.head.len())
            .min(chunk.len());
        let (for_head, rest) = chunk.split_at(to_head);
        self.head.extend_from_slice(for_head);
        if self.tail_cap == 0 || rest.is_empty() {
            return;
        }
        if rest.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&rest[rest.len() - self.tail_cap..]);
        } else {
            let overflow = (self.tail.len() + rest.len()).saturating_sub(self.tail_cap);
            self.tail.drain(..overflow);
            self.tail.extend(rest);
        }
    }

    pub(crate) fn finish(self) -> Captured {
        let bytes_kept = (self.head.len() + self.tail.len()) as u64;
        Captured {
            head: self.head,
            tail: self.tail.into(),
            bytes_seen: self.seen,
            bytes_kept,
            truncated: self.seen > bytes_kept,
        }
    }
}

/// One stream's capture settings.
pub(crate) struct StreamCapture {
    pub(crate) stream: Stream,
    pub(crate) hard_bytes: u64,
    pub(crate) keep_head: usize,
    pub(crate) keep_tail: usize,
    pub(crate) killer: KillHandle,
    /// Set when the pipe reached EOF (every writer closed it).
    pub(crate) eof: Arc<AtomicBool>,
    /// Dropped when the capture ends, for whatever reason: a hang-up for
    /// the exit watch.
    pub(crate) _hang_up: HangUpOnDrop,
}

impl StreamCapture {
    /// Reads `pipe` until EOF, the hard limit, or `stop` turns true; then
    /// drains what is already buffered and returns what was kept.
    pub(crate) async fn run(
        self,
        pipe: pipe::Receiver,
        mut stop: watch::Receiver<bool>,
    ) -> Captured {
        let mut kept = HeadTail::new(self.keep_head, self.keep_tail);
        let mut buf = Vec::new();
        loop {
            tokio::select! {
                biased;
                ready = pipe.readable() => {
                    if ready.is_err() {
                        break;
                    }
                    if buf.is_empty() {
                        buf.resize(FIRST_READ_BYTES, 0);
                    }
                    let want = self.allowance(&kept, buf.len());
                    match pipe.try_read(&mut buf[..want]) {
                        Ok(0) => {
                            self.eof.store(true, Ordering::SeqCst);
                            break;
                        }
                        Ok(n) => {
                            kept.push(&buf[..n]);
                            if n == buf.len() && buf.len() < READ_CHUNK_BYTES {
                                buf.resize(buf.len() * 2, 0);
                            }
                            if self.over_limit(&kept) {
                                break;
                            }
                        }
                        Err(e)
                            if matches!(
                                e.kind(),
                                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                            ) => {}
                        Err(_) => break,
                    }
                }
                _ = stop.wait_for(|stopped| *stopped) => {
                    if buf.is_empty() {
                        buf.resize(FIRST_READ_BYTES, 0);
                    }
                    self.drain_buffered(&pipe, &mut kept, &mut buf);
                    break;
                }
            }
        }
        kept.finish()
    }

    /// Bytes to ask for next: never more than one byte past the hard limit.
    fn allowance(&self, kept: &HeadTail, buf_len: usize) -> usize {
        let left = self
            .hard_bytes
            .saturating_sub(kept.seen())
            .saturating_add(1);
        usize::try_from(left)
            .unwrap_or(usize::MAX)
            .clamp(1, buf_len)
    }

    fn over_limit(&self, kept: &HeadTail) -> bool {
        if kept.seen() > self.hard_bytes {
            self.killer.kill_now(KillReason::OutputLimit(self.stream));
            true
        } else {
            false
        }
    }

    fn drain_buffered(&self, pipe: &pipe::Receiver, kept: &mut HeadTail, buf: &mut [u8]) {
        loop {
            let want = self.allowance(kept, buf.len());
            match pipe.try_read(&mut buf[..want]) {
                Ok(0) => {
                    self.eof.store(true, Ordering::SeqCst);
                    return;
                }
                Ok(n) => {
                    kept.push(&buf[..n]);
                    if self.over_limit(kept) {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }
}

#[cfg(test)]
#[path = "capture_tests.rs"]
mod tests;
