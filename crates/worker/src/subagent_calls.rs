//! The worker's side of nested subagents: a `subagent` tool call becomes a
//! [`FromWorker::SpawnSubagent`] frame, and the supervisor's
//! [`ToWorker::SubagentResult`](subagent_protocol::ToWorker) with the same
//! call id comes back through the protocol reader to the call waiting for
//! it.
//!
//! The worker never starts a process for a subagent: the supervisor is the
//! only one that starts workers. A waiter is cancel-safe: dropping the
//! future of [`SubagentCalls::call`] (the run was cancelled, its deadline
//! passed) removes its entry, and a reply that arrives for no waiter is
//! handed back to the reader to log, never delivered to a later call.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use subagent_protocol::{FromWorker, SpawnRequest, SubagentReply};
use tokio::sync::oneshot;

use crate::outbox::OutboxSender;

type Pending = HashMap<String, oneshot::Sender<SubagentReply>>;

/// Sends spawn requests and routes the replies to their waiters; cheap to
/// clone (the reader holds one, the agent loop another).
#[derive(Debug, Clone)]
pub struct SubagentCalls {
    tx: OutboxSender,
    pending: Arc<Mutex<Pending>>,
    next: Arc<AtomicU64>,
}

/// Removes a call's entry when its waiter goes away, however it goes.
struct Registration {
    pending: Arc<Mutex<Pending>>,
    call_id: String,
}

impl Drop for Registration {
    fn drop(&mut self) {
        lock(&self.pending).remove(&self.call_id);
    }
}

impl SubagentCalls {
    /// Calls whose requests go out through `tx`.
    pub fn new(tx: OutboxSender) -> Self {
        Self {
            tx,
            pending: Arc::default(),
            next: Arc::default(),
        }
    }

    /// Asks the supervisor for a subagent and waits for its reply; `None`
    /// when the reply can never come (the reader is gone).
    ///
    /// `request.call_id` (the model's call id) is made unique to this
    /// worker first: a model may reuse ids, and a late reply to an
    /// abandoned call must not answer a new one.
    pub async fn call(&self, mut request: SpawnRequest) -> Option<SubagentReply> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        request.call_id = format!("{}#{n}", request.call_id);
        let (reply_tx, reply_rx) = oneshot::channel();
        lock(&self.pending).insert(request.call_id.clone(), reply_tx);
        let _registration = Registration {
            pending: Arc::clone(&self.pending),
            call_id: request.call_id.clone(),
        };
        self.tx.send(FromWorker::SpawnSubagent(Box::new(request)));
        reply_rx.await.ok()
    }

    /// Hands `reply` to the call waiting for it; gives it back when none
    /// waits (abandoned, or never asked for).
    pub fn deliver(&self, reply: SubagentReply) -> Result<(), Box<SubagentReply>> {
        let waiter = lock(&self.pending).remove(&reply.call_id);
        match waiter {
            Some(waiter) => waiter.send(reply).map_err(Box::new),
            None => Err(Box::new(reply)),
        }
    }

    /// Calls waiting for a reply now.
    pub fn waiting(&self) -> usize {
        lock(&self.pending).len()
    }
}

/// The map stays usable after a panic elsewhere: entries are plain data.
fn lock(pending: &Mutex<Pending>) -> MutexGuard<'_, Pending> {
    pending
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
#[path = "subagent_calls_tests.rs"]
mod tests;
