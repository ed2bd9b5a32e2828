//! Where the loop's progress goes: a channel to the single frame writer.
//!
//! Sending never blocks and never fails the run: when nobody listens any
//! more (the writer is gone), the worker is about to exit anyway.

use subagent_protocol::{FromWorker, WorkerEvent, message::LogLevel};
use tokio::sync::mpsc;

/// Emits [`WorkerEvent`]s as [`FromWorker::Event`] frames.
///
/// Unbounded because deltas are emitted from a synchronous callback inside
/// the provider's stream; what flows through it is bounded by the model's
/// output and the tool output caps.
#[derive(Debug, Clone)]
pub struct EventSink {
    tx: mpsc::UnboundedSender<FromWorker>,
}

impl EventSink {
    /// A sink feeding `tx`.
    pub fn new(tx: mpsc::UnboundedSender<FromWorker>) -> Self {
        Self { tx }
    }

    /// A sink and the receiving end of its channel.
    pub fn channel() -> (Self, mpsc::UnboundedReceiver<FromWorker>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self::new(tx), rx)
    }

    /// Sends one event.
    pub fn emit(&self, event: WorkerEvent) {
        // A closed channel means the writer is gone and the process is
        // exiting; there is nobody left to tell.
        let _ = self.tx.send(FromWorker::Event(event));
    }

    /// Sends a log line for the session file.
    pub fn log(&self, level: LogLevel, message: impl Into<String>) {
        self.emit(WorkerEvent::Log {
            level,
            message: message.into(),
        });
    }
}
