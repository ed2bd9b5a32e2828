//! Watching a running worker: the handshake, `Start`, every frame it sends,
//! wall and idle timeouts with Cancel-then-terminate escalation, protocol
//! violations and the protocol traffic cap. Returns when the worker's tree is
//! gone and every frame it sent has been read.
//!
//! It decides *why* the supervisor intervened ([`SupervisorCause`]); turning
//! that into a result is [`super::assemble`]'s job.

use std::os::unix::net::UnixStream as StdUnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use subagent_protocol::frame::{AsyncFrameReader, AsyncFrameWriter, FrameError, MaxPayload};
use subagent_protocol::{FromWorker, Outcome, PROTOCOL_VERSION, TaskSpec, ToWorker};
use subagent_sandbox::{ChildExit, KillHandle, KillReason};
use tokio::sync::mpsc;
use tokio::time::{Instant as TokioInstant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::assemble::SupervisorCause;
use super::config::{CANCEL_WINDOW, EXIT_AFTER_DONE, HELLO_TIMEOUT};
use super::context::RunContext;
use super::record::EventRecord;

/// Frames buffered between the reader task and the event loop.
const FRAME_CHANNEL: usize = 256;

/// What watching the worker produced.
pub(super) struct Watch {
    pub(super) outcome: Option<Outcome>,
    pub(super) record: EventRecord,
    pub(super) cause: Option<SupervisorCause>,
    pub(super) exit: Option<Result<ChildExit, tokio::task::JoinError>>,
}

enum Frame {
    Message(FromWorker),
    Eof,
    Error(FrameError),
}

/// Counts bytes read from the worker, for the protocol traffic cap.
struct CountingReader<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for CountingReader<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = buf.filled().len() - before;
        self.count.fetch_add(read as u64, Ordering::Relaxed);
        poll
    }
}

pub(super) async fn watch_worker(
    ctx: &RunContext<'_>,
    socket: StdUnixStream,
    spec: TaskSpec,
    killer: KillHandle,
    mut wait: tokio::task::JoinHandle<ChildExit>,
    cancel: CancellationToken,
) -> Watch {
    let mut watch = Watch {
        outcome: None,
        record: EventRecord::default(),
        cause: None,
        exit: None,
    };
    let limits = &ctx.request.limits;
    let stream = match socket
        .set_nonblocking(true)
        .and_then(|()| tokio::net::UnixStream::from_std(socket))
    {
        Ok(s) => s,
        Err(e) => {
            killer.kill_now(KillReason::Other("socket setup failed".into()));
            watch.cause = Some(SupervisorCause::Protocol(format!(
                "cannot use the worker socket: {e}"
            )));
            watch.exit = Some(wait.await);
            return watch;
        }
    };
    let (read_half, write_half) = stream.into_split();
    let received = Arc::new(AtomicU64::new(0));
    let mut reader = AsyncFrameReader::new(
        CountingReader {
            inner: read_half,
            count: received.clone(),
        },
        MaxPayload::default(),
    );
    let mut writer = AsyncFrameWriter::new(write_half, MaxPayload::default());
    let (tx, mut frames) = mpsc::channel(FRAME_CHANNEL);
    let reader_task = tokio::spawn(async move {
        loop {
            let frame = match reader.read::<FromWorker>().await {
                Ok(Some(m)) => Frame::Message(m),
                Ok(None) => Frame::Eof,
                Err(e) => Frame::Error(e),
            };
            let last = !matches!(frame, Frame::Message(_));
            if tx.send(frame).await.is_err() || last {
                break;
            }
        }
    });

    let now = TokioInstant::now();
    let wall_deadline = now + Duration::from_millis(limits.wall_timeout_ms);
    let idle = Duration::from_millis(limits.idle_timeout_ms);
    let mut idle_deadline = now + idle;
    let hello_deadline = now + HELLO_TIMEOUT.min(Duration::from_millis(limits.wall_timeout_ms));
    let far = now + Duration::from_secs(365 * 24 * 3600);
    let mut escalate_at: Option<TokioInstant> = None;
    let mut hello_seen = false;
    let mut frames_open = true;
    let mut exited = false;
    let mut spec = Some(spec);

    // The loop ends when the worker's tree is gone (wait resolved) and every
    // frame it sent has been read. Once `Done` has arrived the run is decided:
    // wall and idle timers no longer apply, only the exit-after-Done deadline.
    loop {
        if exited && !frames_open {
            break;
        }
        tokio::select! {
            biased;
            _ = cancel.cancelled(), if watch.cause.is_none() && !exited => {
                watch.cause = Some(SupervisorCause::Cancelled);
                ctx.limit("cancel", 0, "cancel", Some("cancelled by the caller".into())).await;
                let _ = writer.write(&ToWorker::Cancel { reason: "cancelled by the caller".into() }).await;
                escalate_at = Some(TokioInstant::now() + CANCEL_WINDOW);
            }
            _ = sleep_until(wall_deadline), if watch.cause.is_none() && watch.outcome.is_none() && !exited => {
                watch.cause = Some(SupervisorCause::WallTimeout);
                ctx.limit("wall_timeout", limits.wall_timeout_ms, "cancel", None).await;
                let _ = writer.write(&ToWorker::Cancel { reason: "wall timeout".into() }).await;
                escalate_at = Some(TokioInstant::now() + CANCEL_WINDOW);
            }
            _ = sleep_until(if hello_seen { idle_deadline } else { hello_deadline }), if watch.cause.is_none() && watch.outcome.is_none() && !exited => {
                if hello_seen {
                    watch.cause = Some(SupervisorCause::IdleTimeout);
                    ctx.limit("idle_timeout", limits.idle_timeout_ms, "cancel", None).await;
                    let _ = writer.write(&ToWorker::Cancel { reason: "idle timeout".into() }).await;
                    escalate_at = Some(TokioInstant::now() + CANCEL_WINDOW);
                } else {
                    watch.cause = Some(SupervisorCause::Protocol(format!(
                        "the worker sent no Hello within {} ms of starting", HELLO_TIMEOUT.as_millis()
                    )));
                    killer.terminate(KillReason::Other("no hello".into()));
                }
            }
            _ = sleep_until(escalate_at.unwrap_or(far)), if escalate_at.is_some() && !exited => {
                escalate_at = None;
                let reason = match &watch.cause {
                    Some(SupervisorCause::WallTimeout) => KillReason::Timeout,
                    Some(SupervisorCause::IdleTimeout) => KillReason::IdleTimeout,
                    Some(SupervisorCause::Cancelled) => KillReason::Cancelled,
                    _ => KillReason::Other("worker did not exit after Done".into()),
                };
                ctx.limit("kill_grace", limits.kill_grace_ms, "sigterm", Some("worker still running; SIGTERM to its group, SIGKILL after the grace".into())).await;
                killer.terminate(reason);
            }
            frame = frames.recv(), if frames_open => {
                let Some(frame) = frame else { frames_open = false; continue };
                match frame {
                    Frame::Eof => frames_open = false,
                    Frame::Error(e) => {
                        frames_open = false;
                        if !e.is_disconnect() && watch.cause.is_none() {
                            watch.cause = Some(SupervisorCause::Protocol(format!("the worker broke the protocol: {e}")));
                            ctx.log("error", format!("protocol violation: {e}; killing the worker")).await;
                            killer.kill_now(KillReason::Other("protocol violation".into()));
                        }
                    }
                    Frame::Message(message) => {
                        if received.load(Ordering::Relaxed) > limits.protocol_bytes && watch.cause.is_none() {
                            watch.cause = Some(SupervisorCause::ProtocolFlood);
                            ctx.limit("protocol_bytes", limits.protocol_bytes, "sigkill", None).await;
                            killer.kill_now(KillReason::Other("protocol output limit".into()));
                            continue;
                        }
                        match message {
                            FromWorker::Hello(hello) if !hello_seen => {
                                hello_seen = true;
                                if hello.protocol_version != PROTOCOL_VERSION {
                                    watch.cause = Some(SupervisorCause::Protocol(format!(
                                        "worker {} speaks protocol v{} but this supervisor speaks v{}; install the worker and supervisor from the same build",
                                        hello.worker_version, hello.protocol_version, PROTOCOL_VERSION
                                    )));
                                    killer.terminate(KillReason::Other("protocol version mismatch".into()));
                                    continue;
                                }
                                idle_deadline = TokioInstant::now() + idle;
                                if let Some(spec) = spec.take() {
                                    if let Err(e) = writer.write(&ToWorker::Start(Box::new(spec))).await {
                                        ctx.log("error", format!("could not send Start to the worker: {e}")).await;
                                    }
                                }
                            }
                            FromWorker::Hello(_) => {
                                if watch.cause.is_none() {
                                    watch.cause = Some(SupervisorCause::Protocol("the worker sent Hello twice".into()));
                                    killer.kill_now(KillReason::Other("protocol violation".into()));
                                }
                            }
                            _ if !hello_seen => {
                                if watch.cause.is_none() {
                                    watch.cause = Some(SupervisorCause::Protocol("the worker sent a message before Hello".into()));
                                    killer.kill_now(KillReason::Other("protocol violation".into()));
                                }
                            }
                            FromWorker::Event(event) => {
                                let (line, progress) = watch.record.observe(event, &ctx.sanitizer);
                                if progress {
                                    idle_deadline = TokioInstant::now() + idle;
                                }
                                if let Some(line) = line {
                                    if let Some(w) = &ctx.writer {
                                        let _ = w.append(line).await;
                                    }
                                }
                            }
                            FromWorker::Pong => {}
                            FromWorker::Done(outcome) => {
                                if watch.outcome.is_none() {
                                    watch.outcome = Some(*outcome);
                                    if escalate_at.is_none() {
                                        escalate_at = Some(TokioInstant::now() + EXIT_AFTER_DONE);
                                    }
                                } else if watch.cause.is_none() {
                                    watch.cause = Some(SupervisorCause::Protocol("the worker sent Done twice".into()));
                                    killer.kill_now(KillReason::Other("protocol violation".into()));
                                }
                            }
                        }
                    }
                }
            }
            exit = &mut wait, if !exited => {
                exited = true;
                watch.exit = Some(exit);
            }
        }
    }
    reader_task.abort();
    watch
}
