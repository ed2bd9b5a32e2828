//! The stdio transport of `serve --mcp`, bounded against a client that
//! does not read what it asked for.
//!
//! rmcp's own transport ([`AsyncRwTransport`]) caps an incoming line at
//! 16 MiB (a longer one is skipped to its newline) and skips lines that are
//! not JSON, but its service loop starts one task per outgoing message and
//! reads the next request meanwhile: a client that sends `tools/list` and
//! never reads made the server hold every answer (60,000 unread: +421 MiB).
//! [`BoundedTransport`] wraps it: every outgoing message is counted, with
//! its JSON size, from the moment rmcp hands it over until it is written,
//! and while more than [`OUTGOING_MESSAGES`] or [`OUTGOING_BYTES`] wait, no
//! further request is read (backpressure, not memory growth).
//!
//! It must not change what is read or written: it only decides when the
//! next message is read.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::sync::Notify;

/// Outgoing bytes (responses and notifications not yet written) above which
/// no further request is read (8 MiB, as `serve --stdio`'s queue).
pub(crate) const OUTGOING_BYTES: usize = 8 * 1024 * 1024;

/// Outgoing messages not yet written above which no further request is
/// read (64): rmcp holds each as a parsed tree in a task of its own, several
/// times its JSON size, so the count is bounded as well as the bytes.
pub(crate) const OUTGOING_MESSAGES: usize = 64;

/// The server side of stdio, as rmcp makes it, with outgoing bytes bounded.
pub(crate) type StdioTransport =
    BoundedTransport<AsyncRwTransport<RoleServer, tokio::io::Stdin, tokio::io::Stdout>>;

/// The server's stdio transport.
pub(crate) fn stdio() -> StdioTransport {
    BoundedTransport::new(AsyncRwTransport::new_server(
        tokio::io::stdin(),
        tokio::io::stdout(),
    ))
}

/// A transport whose outgoing messages hold back the reading of new ones.
pub(crate) struct BoundedTransport<T> {
    inner: T,
    pending: Arc<Pending>,
}

/// Messages and bytes handed to the transport and not written yet.
#[derive(Default)]
struct Pending {
    messages: AtomicUsize,
    bytes: AtomicUsize,
    drained: Notify,
}

/// Takes a message's bytes off [`Pending`] when its send ends (written,
/// failed or dropped).
struct Written {
    pending: Arc<Pending>,
    bytes: usize,
}

impl Drop for Written {
    fn drop(&mut self) {
        self.pending.bytes.fetch_sub(self.bytes, Ordering::AcqRel);
        self.pending.messages.fetch_sub(1, Ordering::AcqRel);
        self.pending.drained.notify_waiters();
    }
}

impl<T> BoundedTransport<T> {
    pub(crate) fn new(inner: T) -> Self {
        Self {
            inner,
            pending: Arc::default(),
        }
    }
}

impl Pending {
    /// Returns once the outgoing bytes and messages are at or below
    /// [`OUTGOING_BYTES`] and [`OUTGOING_MESSAGES`].
    async fn room(&self) {
        let mut logged = false;
        loop {
            // Registered before the check, so a drain in between is seen.
            let drained = self.drained.notified();
            let queued = self.bytes.load(Ordering::Acquire);
            let messages = self.messages.load(Ordering::Acquire);
            if queued <= OUTGOING_BYTES && messages <= OUTGOING_MESSAGES {
                if logged {
                    tracing::info!("the client reads again: reading requests");
                }
                return;
            }
            if !logged {
                tracing::info!(
                    queued_bytes = queued,
                    queued_messages = messages,
                    "stdout is not being read: reading no further request until the client reads"
                );
                logged = true;
            }
            drained.await;
        }
    }
}

impl<T> Transport<RoleServer> for BoundedTransport<T>
where
    T: Transport<RoleServer>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // Counted now, when rmcp hands the message over (it then holds it in
        // a task of its own until written), not when the write starts.
        let bytes = serde_json::to_vec(&item).map_or(0, |json| json.len());
        self.pending.bytes.fetch_add(bytes, Ordering::AcqRel);
        self.pending.messages.fetch_add(1, Ordering::AcqRel);
        let written = Written {
            pending: Arc::clone(&self.pending),
            bytes,
        };
        let send = self.inner.send(item);
        async move {
            let sent = send.await;
            drop(written);
            sent
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let pending = Arc::clone(&self.pending);
        pending.room().await;
        self.inner.receive().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}
