//! Where the loop's progress goes: the outbox of the single frame writer.
//!
//! Sending never blocks and never fails the run: when nobody listens any
//! more (the writer is gone), the worker is about to exit anyway; when the
//! supervisor reads slowly, the outbox keeps memory bounded
//! ([`crate::outbox`]).

use subagent_protocol::{FromWorker, WorkerEvent, message::LogLevel};

use crate::outbox::{OutboxReceiver, OutboxSender, outbox};

/// Emits [`WorkerEvent`]s as [`FromWorker::Event`] frames.
#[derive(Debug, Clone)]
pub struct EventSink {
    tx: OutboxSender,
}

impl EventSink {
    /// A sink feeding `tx`.
    pub fn new(tx: OutboxSender) -> Self {
        Self { tx }
    }

    /// A sink and the receiving end of its outbox.
    pub fn channel() -> (Self, OutboxReceiver) {
        let (tx, rx) = outbox();
        (Self::new(tx), rx)
    }

    /// Sends one event.
    pub fn emit(&self, event: WorkerEvent) {
        self.tx.send(FromWorker::Event(event));
    }

    /// Sends a log line for the session file.
    pub fn log(&self, level: LogLevel, message: impl Into<String>) {
        self.emit(WorkerEvent::Log {
            level,
            message: message.into(),
        });
    }
}
