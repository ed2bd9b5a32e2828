//! The queue between one `subagent` tool call's run and the task that
//! sends its progress to the MCP client, bounded against a client that
//! does not read.
//!
//! The run's progress sink pushes without waiting (the sink's contract: it
//! is called inline from the task that drives the run); the forwarder
//! takes messages out as fast as the client reads its notifications. A
//! client that never reads stops the forwarder at its first unwritten
//! notification, and an unbounded queue then held every later event (one
//! kept 315 MiB, issue 32). This one holds at most [`QUEUED_MESSAGES`]
//! messages of at most [`MESSAGE_BYTES`] each: when full, the oldest is
//! dropped and counted, and the forwarder says how many it lost in the
//! next message it sends (progress is a view; the result carries the run).
//!
//! It knows nothing of MCP: messages in, messages with their sequence
//! number and the drops before them out.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Notify;

/// Messages held for a call whose client does not read (256); past it the
/// oldest is dropped.
pub(crate) const QUEUED_MESSAGES: usize = 256;

/// Longest message held, bytes (1 KiB): a tool name is the model's and may
/// be megabytes; the rest is cut. At most 256 KiB per call is held.
pub(crate) const MESSAGE_BYTES: usize = 1024;

/// One message as the forwarder sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Delivered {
    /// The message, cut to [`MESSAGE_BYTES`].
    pub(crate) message: String,
    /// 1-based number of the event among all the call's, the dropped ones
    /// included: it grows by more than one after a drop.
    pub(crate) sequence: u64,
    /// Messages dropped since the last one taken.
    pub(crate) dropped_before: u64,
}

#[derive(Default)]
struct State {
    messages: VecDeque<(u64, String)>,
    /// Events pushed so far.
    pushed: u64,
    /// Dropped since the last take, and in all.
    dropped_since_take: u64,
    dropped: u64,
    closed: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    ready: Notify,
}

impl Shared {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain counters behind.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The run's end of the queue; the queue closes when it is dropped.
pub(crate) struct ProgressSender(Arc<Shared>);

/// The forwarder's end.
pub(crate) struct ProgressReceiver(Arc<Shared>);

/// A new, empty queue.
pub(crate) fn progress_queue() -> (ProgressSender, ProgressReceiver) {
    let shared = Arc::new(Shared::default());
    (
        ProgressSender(Arc::clone(&shared)),
        ProgressReceiver(shared),
    )
}

impl ProgressSender {
    /// Queues `message` (cut to [`MESSAGE_BYTES`]), dropping the oldest
    /// when the queue is full. Never waits.
    pub(crate) fn push(&self, message: &str) {
        let message = cut(message);
        let mut state = self.0.state();
        state.pushed += 1;
        if state.messages.len() >= QUEUED_MESSAGES {
            state.messages.pop_front();
            state.dropped_since_take += 1;
            state.dropped += 1;
        }
        let sequence = state.pushed;
        state.messages.push_back((sequence, message));
        drop(state);
        self.0.ready.notify_one();
    }
}

impl Drop for ProgressSender {
    fn drop(&mut self) {
        self.0.state().closed = true;
        self.0.ready.notify_one();
    }
}

impl ProgressReceiver {
    /// The oldest message held; `None` once the sender is gone and every
    /// message was taken.
    pub(crate) async fn next(&self) -> Option<Delivered> {
        loop {
            {
                let mut state = self.0.state();
                if let Some((sequence, message)) = state.messages.pop_front() {
                    let dropped_before = std::mem::take(&mut state.dropped_since_take);
                    return Some(Delivered {
                        message,
                        sequence,
                        dropped_before,
                    });
                }
                if state.closed {
                    return None;
                }
            }
            // notify_one keeps a permit when nobody waits: a push between
            // the check and this wait is not missed.
            self.0.ready.notified().await;
        }
    }

    /// Messages dropped so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.0.state().dropped
    }
}

/// `message` cut to at most [`MESSAGE_BYTES`] at a character boundary,
/// with `...` where it was cut.
fn cut(message: &str) -> String {
    if message.len() <= MESSAGE_BYTES {
        return message.to_owned();
    }
    let mut end = MESSAGE_BYTES - 3;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &message[..end])
}

#[cfg(test)]
#[path = "progress_queue_tests.rs"]
mod tests;
