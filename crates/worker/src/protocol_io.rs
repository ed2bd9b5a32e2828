//! The worker's side of fd 3: handshake, one frame writer, one frame
//! reader, and the rule that a vanished supervisor stops the worker.
//!
//! [`serve`] sends `Hello`, waits for `Start`, runs the task while a reader
//! task answers `Ping`, turns `Cancel` into a cancellation, hands each
//! `SubagentResult` to the `subagent` call waiting for it and a late
//! `Python` to `python_execute` ([`FromSupervisor`]), and sends
//! exactly one `Done`. All frames go through one writer task fed by a
//! channel, so frames never interleave. End of stream or a broken frame on
//! the socket returns [`ServeError::SupervisorGone`] at once, without waiting
//! for the run; the binary then exits.
//!
//! This module never prints to stdout and never reads the environment
//! except for [`PROTOCOL_FD_ENV`].

use std::future::Future;
use std::io;
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::fs::FileTypeExt;

use subagent_protocol::frame::{AsyncFrameReader, AsyncFrameWriter};
use subagent_protocol::message::{LogLevel, OutcomeError};
use subagent_protocol::{
    ErrorCode, FromWorker, Hello, MaxPayload, Outcome, PythonInterpreter, StopReason, TaskSpec,
    ToWorker, Usage,
};
use subagent_tools::PythonLater;
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::agent::EventSink;
use crate::outbox::{OutboxReceiver, OutboxSender, outbox};
use crate::subagent_calls::SubagentCalls;

/// Environment variable naming the protocol socket's fd.
pub const PROTOCOL_FD_ENV: &str = "SUBAGENT_PROTOCOL_FD";

/// The protocol socket's fd when [`PROTOCOL_FD_ENV`] is unset.
pub const DEFAULT_PROTOCOL_FD: RawFd = 3;

/// What the supervisor hands a running task besides cancellation: the
/// results of the subagents it asked for, and the Python interpreter when
/// `Start` said it was still pending.
#[derive(Debug)]
pub struct FromSupervisor {
    /// Delivers each `SubagentResult` to the call waiting for it.
    pub subagents: SubagentCalls,
    /// The interpreter of a late `ToWorker::Python`.
    pub python: PythonLater,
}

/// Why serving the protocol stopped early.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The supervisor closed the socket or sent something unreadable.
    #[error("the supervisor is gone: {0}")]
    SupervisorGone(String),
}

/// The protocol fd named by the environment, or the default.
pub fn protocol_fd_from_env() -> Result<RawFd, String> {
    match std::env::var(PROTOCOL_FD_ENV) {
        Err(_) => Ok(DEFAULT_PROTOCOL_FD),
        Ok(value) => value
            .parse::<RawFd>()
            .ok()
            .filter(|fd| *fd >= 0)
            .ok_or_else(|| format!("{PROTOCOL_FD_ENV}={value:?} is not a file descriptor number")),
    }
}

/// Takes ownership of the inherited socket `fd` as a tokio stream.
///
/// The fd is checked to be an open socket first, and is replaced by a
/// close-on-exec duplicate so tool processes never inherit the protocol
/// socket.
pub fn open_protocol_socket(fd: RawFd) -> io::Result<UnixStream> {
    let meta = std::fs::metadata(format!("/proc/self/fd/{fd}")).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("fd {fd} is not open ({e}); the worker must be started by the supervisor"),
        )
    })?;
    if !meta.file_type().is_socket() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("fd {fd} is not a socket; the worker must be started by the supervisor"),
        ));
    }
    // SAFETY: fd was checked above to be an open socket of this process, and
    // nothing else in the worker uses it: the stream becomes its only owner.
    #[expect(unsafe_code, reason = "adopting the inherited protocol fd")]
    let inherited = unsafe { std::os::unix::net::UnixStream::from_raw_fd(fd) };
    // try_clone duplicates with F_DUPFD_CLOEXEC; dropping the original closes
    // the inheritable fd.
    let stream = inherited.try_clone()?;
    drop(inherited);
    stream.set_nonblocking(true)?;
    UnixStream::from_std(stream)
}

/// Runs the protocol on `stream`: `Hello`, `Start`, the task via `run`,
/// `Done`.
///
/// `run` gets the spec, the event sink, the handle through which the
/// `subagent` tool asks for nested subagents, and the cancellation token;
/// it must return promptly once the token is cancelled.
pub async fn serve<F, Fut>(stream: UnixStream, run: F) -> Result<(), ServeError>
where
    F: FnOnce(Box<TaskSpec>, EventSink, FromSupervisor, CancellationToken) -> Fut,
    Fut: Future<Output = Outcome>,
{
    let (read_half, write_half) = stream.into_split();
    let mut reader = AsyncFrameReader::new(read_half, MaxPayload::default());
    let (tx, rx) = outbox();
    let (gone_tx, mut gone_rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(write_frames(
        AsyncFrameWriter::new(write_half, MaxPayload::default()),
        rx,
        gone_tx.clone(),
    ));
    tx.send(FromWorker::Hello(Hello::current(env!("CARGO_PKG_VERSION"))));

    let spec = loop {
        let frame = tokio::select! {
            frame = reader.read::<ToWorker>() => frame,
            reason = gone_rx.recv() => return Err(gone(reason)),
        };
        match frame {
            Ok(Some(ToWorker::Start(spec))) => break spec,
            Ok(Some(ToWorker::Ping)) => {
                tx.send(FromWorker::Pong);
            }
            // Nothing was asked for before Start: nothing to deliver; and
            // an interpreter is only ever sent after it.
            Ok(Some(ToWorker::SubagentResult(_) | ToWorker::Python(_))) => {}
            Ok(Some(ToWorker::Cancel { reason })) => {
                tx.send(FromWorker::Done(Box::new(cancelled_before_start(&reason))));
                return finish(writer, &mut gone_rx).await;
            }
            Ok(None) => {
                return Err(ServeError::SupervisorGone(
                    "end of stream before Start".into(),
                ));
            }
            Err(e) => return Err(ServeError::SupervisorGone(format!("reading Start: {e}"))),
        }
    };

    let cancel = CancellationToken::new();
    let events = EventSink::new(tx.clone());
    let subagents = SubagentCalls::new(tx.clone());
    let (python_tx, python) = watch::channel(None);
    let reader_task = tokio::spawn(read_frames(
        reader,
        Deliveries {
            tx: tx.clone(),
            events: events.clone(),
            subagents: subagents.clone(),
            python: python_tx,
            cancel: cancel.clone(),
        },
        gone_tx,
    ));
    let from_supervisor = FromSupervisor { subagents, python };
    let outcome = tokio::select! {
        outcome = run(spec, events, from_supervisor, cancel) => outcome,
        Some(reason) = gone_rx.recv() => {
            reader_task.abort();
            return Err(ServeError::SupervisorGone(reason));
        }
    };
    reader_task.abort();
    tx.send(FromWorker::Done(Box::new(outcome)));
    finish(writer, &mut gone_rx).await
}

/// Waits until the writer has sent `Done` (or the supervisor vanished).
async fn finish(
    writer: tokio::task::JoinHandle<()>,
    gone_rx: &mut mpsc::UnboundedReceiver<String>,
) -> Result<(), ServeError> {
    tokio::select! {
        joined = writer => match joined {
            Ok(()) => match gone_rx.try_recv() {
                Ok(reason) => Err(ServeError::SupervisorGone(reason)),
                Err(_) => Ok(()),
            },
            Err(e) => Err(ServeError::SupervisorGone(format!("frame writer stopped: {e}"))),
        },
        // `None` only says every reporter has finished; the writer's own
        // result decides then.
        Some(reason) = gone_rx.recv() => Err(ServeError::SupervisorGone(reason)),
    }
}

fn gone(reason: Option<String>) -> ServeError {
    ServeError::SupervisorGone(reason.unwrap_or_else(|| "connection lost".to_owned()))
}

/// The one writer: sends frames in order and stops after `Done`.
async fn write_frames(
    mut writer: AsyncFrameWriter<OwnedWriteHalf>,
    mut rx: OutboxReceiver,
    gone_tx: mpsc::UnboundedSender<String>,
) {
    while let Some(frame) = rx.recv().await {
        let is_done = matches!(frame, FromWorker::Done(_));
        let result = match writer.write(&frame).await {
            // An unencodable frame (too large) leaves the stream intact: say
            // so instead of losing the run's only `Done`.
            Err(e) if !is_io(&e) => writer.write(&replacement(frame, &e.to_string())).await,
            other => other,
        };
        if let Err(e) = result {
            let _ = gone_tx.send(format!("writing a frame: {e}"));
            return;
        }
        if is_done {
            return;
        }
    }
}

fn is_io(e: &subagent_protocol::FrameError) -> bool {
    matches!(e, subagent_protocol::FrameError::Io(_))
}

/// A small frame standing in for one that could not be encoded.
fn replacement(frame: FromWorker, error: &str) -> FromWorker {
    match frame {
        FromWorker::Done(outcome) => FromWorker::Done(Box::new(Outcome {
            final_text: String::new(),
            structured_output_json: None,
            error: Some(OutcomeError {
                code: ErrorCode::SubagentFailed,
                message: format!(
                    "the run's result could not be sent to the supervisor ({error}); lower the \
                     output limits"
                ),
            }),
            ..*outcome
        })),
        _ => FromWorker::Event(subagent_protocol::WorkerEvent::Log {
            level: LogLevel::Warn,
            message: format!("an event was dropped because it could not be sent: {error}"),
        }),
    }
}

/// Where the reader task hands what the supervisor sends during the run.
struct Deliveries {
    tx: OutboxSender,
    events: EventSink,
    subagents: SubagentCalls,
    python: watch::Sender<Option<PythonInterpreter>>,
    cancel: CancellationToken,
}

/// The reader task: `Cancel` cancels, `Ping` gets `Pong`, a subagent's
/// result goes to the call waiting for it, the interpreter to
/// `python_execute`, anything broken means the supervisor is gone.
async fn read_frames(
    mut reader: AsyncFrameReader<OwnedReadHalf>,
    deliveries: Deliveries,
    gone_tx: mpsc::UnboundedSender<String>,
) {
    let Deliveries {
        tx,
        events,
        subagents,
        python,
        cancel,
    } = deliveries;
    loop {
        match reader.read::<ToWorker>().await {
            Ok(Some(ToWorker::Cancel { reason })) => {
                events.log(LogLevel::Info, format!("cancel requested: {reason}"));
                cancel.cancel();
            }
            Ok(Some(ToWorker::Ping)) => {
                tx.send(FromWorker::Pong);
            }
            Ok(Some(ToWorker::Start(_))) => {
                events.log(
                    LogLevel::Warn,
                    "ignored a second Start: a worker runs one task",
                );
            }
            Ok(Some(ToWorker::SubagentResult(reply))) => {
                if let Err(reply) = subagents.deliver(*reply) {
                    events.log(
                        LogLevel::Warn,
                        format!(
                            "ignored a subagent result for call {} that nothing waits for",
                            reply.call_id
                        ),
                    );
                }
            }
            Ok(Some(ToWorker::Python(interpreter))) => {
                if python.borrow().is_some() {
                    events.log(
                        LogLevel::Warn,
                        "ignored a second Python interpreter: the first one stands",
                    );
                } else {
                    python.send_replace(Some(interpreter));
                }
            }
            Ok(None) => {
                let _ = gone_tx.send("end of stream on the protocol socket".to_owned());
                return;
            }
            Err(e) => {
                let _ = gone_tx.send(format!("reading a frame: {e}"));
                return;
            }
        }
    }
}

fn cancelled_before_start(reason: &str) -> Outcome {
    Outcome {
        final_text: String::new(),
        structured_output_json: None,
        usage: Usage::default(),
        stop_reason: StopReason::Cancelled,
        error: Some(OutcomeError {
            code: ErrorCode::SubagentCancelled,
            message: format!("the run was cancelled before it started: {reason}"),
        }),
        model: String::new(),
    }
}
