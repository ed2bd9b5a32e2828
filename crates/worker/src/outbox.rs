//! The worker's outgoing frame queue: many producers (the agent loop's
//! events, the reader's `Pong`s, the final `Done`), one consumer (the frame
//! writer), and bounded memory even when the supervisor stops reading.
//!
//! Producers never block: stream deltas are emitted from a synchronous
//! callback inside the provider's stream. The bound comes from the only
//! frames that can pile up, the text and reasoning deltas: past
//! [`COALESCE_AFTER_FRAMES`] queued frames, a delta is appended to the
//! queued delta of its kind instead of adding a frame, and past
//! [`MAX_QUEUED_DELTA_BYTES`] of queued delta text further deltas are
//! dropped and counted; one warning saying how many bytes were dropped goes
//! out ahead of the next other frame. Every other frame is one per turn,
//! tool call or request, so its number is bounded by the run's own budgets.
//! Nothing but surplus deltas is ever dropped, and frames keep their order.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use subagent_protocol::message::LogLevel;
use subagent_protocol::{FromWorker, WorkerEvent};
use tokio::sync::Notify;

/// Queued frames after which deltas are merged into the last queued delta
/// of their kind rather than queued as frames of their own (count).
pub const COALESCE_AFTER_FRAMES: usize = 1024;

/// Queued delta text after which further deltas are dropped, bytes: the
/// supervisor's default protocol cap (64 MiB) would end the run past it
/// anyway.
pub const MAX_QUEUED_DELTA_BYTES: usize = 64 * 1024 * 1024;

#[derive(Debug, Default)]
struct Queue {
    frames: VecDeque<FromWorker>,
    delta_bytes: usize,
    dropped_delta_bytes: usize,
}

#[derive(Debug)]
struct Shared {
    queue: Mutex<Queue>,
    ready: Notify,
    senders: AtomicUsize,
    limits: Limits,
}

#[derive(Debug, Clone, Copy)]
struct Limits {
    coalesce_after: usize,
    max_delta_bytes: usize,
}

/// The producing end; cheap to clone. When the last one is dropped the
/// receiver sees the end of the queue.
#[derive(Debug)]
pub struct OutboxSender {
    shared: Arc<Shared>,
}

/// The consuming end, for the one frame writer.
#[derive(Debug)]
pub struct OutboxReceiver {
    shared: Arc<Shared>,
}

/// A queue with the default limits.
pub fn outbox() -> (OutboxSender, OutboxReceiver) {
    with_limits(COALESCE_AFTER_FRAMES, MAX_QUEUED_DELTA_BYTES)
}

fn with_limits(coalesce_after: usize, max_delta_bytes: usize) -> (OutboxSender, OutboxReceiver) {
    let shared = Arc::new(Shared {
        queue: Mutex::new(Queue::default()),
        ready: Notify::new(),
        senders: AtomicUsize::new(1),
        limits: Limits {
            coalesce_after,
            max_delta_bytes,
        },
    });
    (
        OutboxSender {
            shared: Arc::clone(&shared),
        },
        OutboxReceiver { shared },
    )
}

impl Shared {
    /// The queue, even if a producer panicked while holding it: the data is
    /// a plain queue that every operation leaves consistent.
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl OutboxSender {
    /// Queues `frame`; never blocks, never fails.
    pub fn send(&self, frame: FromWorker) {
        let limits = self.shared.limits;
        {
            let mut queue = self.shared.lock();
            match delta_text(&frame).map(str::len) {
                Some(len) => queue.push_delta(frame, len, limits),
                None => {
                    queue.flush_drop_warning();
                    queue.frames.push_back(frame);
                }
            }
        }
        self.shared.ready.notify_one();
    }
}

impl Queue {
    fn push_delta(&mut self, frame: FromWorker, len: usize, limits: Limits) {
        if self.delta_bytes.saturating_add(len) > limits.max_delta_bytes {
            self.dropped_delta_bytes = self.dropped_delta_bytes.saturating_add(len);
            return;
        }
        self.delta_bytes += len;
        if self.frames.len() >= limits.coalesce_after
            && let Some(last) = self.frames.back_mut()
            && append_same_kind(last, &frame)
        {
            return;
        }
        self.frames.push_back(frame);
    }

    fn flush_drop_warning(&mut self) {
        if self.dropped_delta_bytes == 0 {
            return;
        }
        let dropped = std::mem::take(&mut self.dropped_delta_bytes);
        self.frames.push_back(FromWorker::Event(WorkerEvent::Log {
            level: LogLevel::Warn,
            message: format!(
                "{dropped} bytes of streamed text were not forwarded: the supervisor was not \
                 reading and {} MiB were already queued; the final message is complete",
                MAX_QUEUED_DELTA_BYTES / (1024 * 1024)
            ),
        }));
    }

    fn pop(&mut self) -> Option<FromWorker> {
        let frame = self.frames.pop_front()?;
        if let Some(text) = delta_text(&frame) {
            self.delta_bytes = self.delta_bytes.saturating_sub(text.len());
        }
        Some(frame)
    }
}

fn delta_text(frame: &FromWorker) -> Option<&str> {
    match frame {
        FromWorker::Event(WorkerEvent::TextDelta { text })
        | FromWorker::Event(WorkerEvent::ReasoningDelta { text }) => Some(text),
        _ => None,
    }
}

/// Appends `next`'s text to `last` when both are deltas of the same kind.
fn append_same_kind(last: &mut FromWorker, next: &FromWorker) -> bool {
    match (last, next) {
        (
            FromWorker::Event(WorkerEvent::TextDelta { text }),
            FromWorker::Event(WorkerEvent::TextDelta { text: more }),
        )
        | (
            FromWorker::Event(WorkerEvent::ReasoningDelta { text }),
            FromWorker::Event(WorkerEvent::ReasoningDelta { text: more }),
        ) => {
            text.push_str(more);
            true
        }
        _ => false,
    }
}

impl Clone for OutboxSender {
    fn clone(&self) -> Self {
        self.shared.senders.fetch_add(1, Ordering::AcqRel);
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl Drop for OutboxSender {
    fn drop(&mut self) {
        if self.shared.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shared.ready.notify_one();
        }
    }
}

impl OutboxReceiver {
    /// The next frame, or `None` once every sender is gone and the queue is
    /// empty.
    pub async fn recv(&mut self) -> Option<FromWorker> {
        let shared = Arc::clone(&self.shared);
        loop {
            let notified = shared.ready.notified();
            if let Some(frame) = self.try_recv() {
                return Some(frame);
            }
            if shared.senders.load(Ordering::Acquire) == 0 {
                return self.try_recv();
            }
            notified.await;
        }
    }

    /// The next frame if one is queued.
    pub fn try_recv(&mut self) -> Option<FromWorker> {
        self.shared.lock().pop()
    }

    /// Frames queued now (for tests and diagnostics).
    pub fn len(&self) -> usize {
        self.shared.lock().frames.len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
#[path = "outbox_tests.rs"]
mod tests;
