//! Getting finished spans to the collector without ever holding up a run:
//! a bounded queue ([`BoundedProcessor`]) that drops and counts what does
//! not fit, drained by one thread of its own that batches and posts with
//! the OTLP exporter over the workspace's HTTP client ([`ReqwestClient`]).
//!
//! The first failed export is one warning on stderr; later ones are
//! silent (a dead collector must not flood the operator's terminal). This
//! module builds no spans and decides nothing about what they hold.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use opentelemetry::Context;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter, SpanProcessor};

/// Spans posted in one request at most.
const MAX_BATCH: usize = 512;

/// How long finished spans wait for more before they are posted.
const EXPORT_DELAY: Duration = Duration::from_millis(500);

/// The OTLP exporter's HTTP client: the workspace's reqwest (0.12, rustls),
/// so that the exporter brings no client of its own.
#[derive(Debug, Clone)]
pub(super) struct ReqwestClient(pub(super) reqwest::Client);

#[async_trait::async_trait]
impl HttpClient for ReqwestClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let response = self
            .0
            .request(parts.method, parts.uri.to_string())
            .headers(parts.headers)
            .body(body)
            .send()
            .await?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.bytes().await?;
        let mut built = Response::builder().status(status);
        if let Some(h) = built.headers_mut() {
            *h = headers;
        }
        Ok(built.body(body)?)
    }
}

enum Queued {
    Span(Box<SpanData>),
    /// Post what is queued, then answer.
    Flush(SyncSender<()>),
}

/// A span processor with a bounded queue: `on_end` never blocks; a span
/// that does not fit is counted in `dropped`.
#[derive(Debug)]
pub(super) struct BoundedProcessor {
    queue: Mutex<Option<SyncSender<Queued>>>,
    dropped: Arc<AtomicU64>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Queued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Queued")
    }
}

impl BoundedProcessor {
    /// Starts the export thread posting with `exporter` to `endpoint`
    /// (named in the one warning), with room for `capacity` spans.
    pub(super) fn start<E: SpanExporter + 'static>(
        exporter: E,
        endpoint: String,
        capacity: usize,
        dropped: Arc<AtomicU64>,
    ) -> std::io::Result<Self> {
        let (tx, rx) = sync_channel(capacity);
        let thread = std::thread::Builder::new()
            .name("otel-export".into())
            .spawn(move || drain(rx, exporter, &endpoint))?;
        Ok(Self {
            queue: Mutex::new(Some(tx)),
            dropped,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// A processor whose queue is `queue`, drained by no thread (tests).
    #[cfg(test)]
    fn undrained(capacity: usize, dropped: Arc<AtomicU64>) -> (Self, Receiver<Queued>) {
        let (tx, rx) = sync_channel(capacity);
        let processor = Self {
            queue: Mutex::new(Some(tx)),
            dropped,
            thread: Mutex::new(None),
        };
        (processor, rx)
    }

    fn sender(&self) -> Option<SyncSender<Queued>> {
        self.queue.lock().ok().and_then(|q| q.clone())
    }
}

impl SpanProcessor for BoundedProcessor {
    fn on_start(&self, _span: &mut Span, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        let Some(tx) = self.sender() else {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        };
        match tx.try_send(Queued::Span(Box::new(span))) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.flush_within(Duration::from_secs(5))
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        let flushed = self.flush_within(timeout);
        if let Ok(mut queue) = self.queue.lock() {
            queue.take();
        }
        // The thread ends once the queue is closed; it is not waited for
        // past the flush (an export hung on a dead collector must not hold
        // the process).
        if flushed.is_ok()
            && let Ok(mut thread) = self.thread.lock()
            && let Some(handle) = thread.take()
        {
            let _ = handle.join();
        }
        flushed
    }
}

impl BoundedProcessor {
    fn flush_within(&self, timeout: Duration) -> OTelSdkResult {
        let Some(tx) = self.sender() else {
            return Err(OTelSdkError::AlreadyShutdown);
        };
        let deadline = std::time::Instant::now() + timeout;
        let (ack_tx, ack_rx) = sync_channel(1);
        // A full queue is waited on here, at a flush only (the end of the
        // process), never in a run, and never past `timeout`: a hung
        // collector must not hold the process.
        let mut flush = Queued::Flush(ack_tx);
        loop {
            match tx.try_send(flush) {
                Ok(()) => break,
                Err(TrySendError::Disconnected(_)) => {
                    return Err(OTelSdkError::InternalFailure("export thread gone".into()));
                }
                Err(TrySendError::Full(back)) => {
                    if std::time::Instant::now() >= deadline {
                        return Err(OTelSdkError::Timeout(timeout));
                    }
                    flush = back;
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        ack_rx
            .recv_timeout(left)
            .map_err(|_| OTelSdkError::Timeout(timeout))
    }
}

/// The export thread: batches what the queue holds and posts it, until
/// the queue closes.
fn drain<E: SpanExporter>(rx: Receiver<Queued>, exporter: E, endpoint: &str) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        tracing::warn!("telemetry is off: cannot start the export thread's runtime");
        return;
    };
    let warned = AtomicBool::new(false);
    let mut batch = Vec::new();
    let post = |batch: &mut Vec<SpanData>| {
        if batch.is_empty() {
            return;
        }
        let spans = std::mem::take(batch);
        if let Err(e) = runtime.block_on(exporter.export(spans))
            && !warned.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(
                "cannot export traces to {endpoint}: {e}; runs are not affected, and further export failures are not reported"
            );
        }
    };
    loop {
        match rx.recv_timeout(EXPORT_DELAY) {
            Ok(Queued::Span(span)) => {
                batch.push(*span);
                if batch.len() >= MAX_BATCH {
                    post(&mut batch);
                }
            }
            Ok(Queued::Flush(ack)) => {
                post(&mut batch);
                let _ = ack.send(());
            }
            Err(RecvTimeoutError::Timeout) => post(&mut batch),
            Err(RecvTimeoutError::Disconnected) => {
                post(&mut batch);
                return;
            }
        }
    }
}

#[cfg(test)]
#[path = "export_tests.rs"]
mod tests;
