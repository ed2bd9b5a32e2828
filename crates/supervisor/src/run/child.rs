//! One child's life: session file and lifecycle start, spawn under the
//! sandbox, handshake, `Start`, events into the session file, wall and idle
//! timeouts with Cancel-then-kill escalation, and the wait for the whole tree
//! to be dead and reaped. The outcome goes to [`super::assemble`].
//!
//! This is the only place that talks to a worker. It must never return before
//! the worker's tree is dead: the sandbox's `wait` guarantees that, and its
//! drop guard covers early returns.

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream as StdUnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use subagent_protocol::frame::{AsyncFrameReader, AsyncFrameWriter, FrameError, MaxPayload};
use subagent_protocol::result::SubagentResult;
use subagent_protocol::session::{
    AgentEvent, LifecycleEvent, LimitLine, LogLine, MessageLine, Role, SESSION_FORMAT_VERSION,
    SessionEntry, SessionHeader, SessionLine,
};
use subagent_protocol::{FromWorker, Outcome, PROTOCOL_VERSION, TaskSpec, ToWorker};
use subagent_sandbox::{ChildExit, KillHandle, KillReason, SandboxSpec};
use tokio::sync::mpsc;
use tokio::time::{Instant as TokioInstant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::assemble::{self, ChildRun, SupervisorCause};
use super::record::EventRecord;
use super::request::RunRequest;
use super::supervisor::{SupervisorConfig, tools_for_depth};
use crate::agents::AgentDefinition;
use crate::sanitize::Sanitizer;
use crate::session::{SessionPaths, SessionWriter, append_to_parent};

/// How long a fresh worker may take to say `Hello` (10 s): a worker that
/// cannot start its runtime in that time is broken, not slow.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// After `Cancel`, how long the worker gets to send `Done` with its partial
/// output before SIGTERM (2 s): cancelling aborts an HTTP request and a tool
/// within 100 ms, so this is generous.
const CANCEL_WINDOW: Duration = Duration::from_secs(2);

/// After `Done`, how long the worker gets to exit by itself (5 s) before it is
/// terminated.
const EXIT_AFTER_DONE: Duration = Duration::from_secs(5);

/// Frames buffered between the reader task and the event loop.
const FRAME_CHANNEL: usize = 256;

/// Bytes kept of each of stdout and stderr: head and tail (64 KiB each).
const CAPTURE_KEEP: usize = 64 * 1024;

/// Runs one admitted request to its result.
pub(super) async fn run_child(
    config: &SupervisorConfig,
    request: RunRequest,
    agent: AgentDefinition,
    cancel: CancellationToken,
) -> SubagentResult {
    let run_id = new_run_id();
    let started_wall = SystemTime::now();
    let started_at = subagent_protocol::time::rfc3339_ms(started_wall);
    let started = Instant::now();
    let api_key = request
        .provider
        .api_key
        .as_ref()
        .map(|k| k.expose().to_owned());
    let sanitizer = Sanitizer::new(api_key, std::env::var("HOME").ok());
    let paths = SessionPaths::new(&config.sessions_dir, &run_id, &request.agent, started_wall);
    let spec = task_spec(&request, &agent, &run_id);

    let mut ctx = RunContext {
        config,
        request: &request,
        run_id: run_id.clone(),
        started_at,
        started,
        sanitizer,
        paths,
        writer: None,
        pid: None,
    };

    let writer = match SessionWriter::create(&ctx.paths.session_file) {
        Ok(w) => w,
        Err(e) => {
            return assemble::setup_failure(
                &ctx.assembly(),
                format!("cannot create the session file: {e}"),
            );
        }
    };
    ctx.writer = Some(writer);

    let run = spawn_and_watch(&mut ctx, spec, cancel).await;
    let result = assemble::assemble(&ctx.assembly(), run);
    ctx.finish(&result).await;
    result
}

/// Everything about the run that the steps below share.
pub(super) struct RunContext<'a> {
    config: &'a SupervisorConfig,
    request: &'a RunRequest,
    run_id: String,
    started_at: String,
    started: Instant,
    sanitizer: Sanitizer,
    paths: SessionPaths,
    writer: Option<SessionWriter>,
    pid: Option<u32>,
}

impl RunContext<'_> {
    fn assembly(&self) -> assemble::Assembly {
        assemble::Assembly {
            run_id: self.run_id.clone(),
            agent: self.request.agent.clone(),
            task: self.request.task.clone(),
            model: self.request.provider.model.clone(),
            mode: self.request.mode,
            limits: self.request.limits.clone(),
            session_file: self.paths.session_file.display().to_string(),
            full_output_file: self.paths.full_output_file.clone(),
            duration: self.started.elapsed(),
            sanitizer: self.sanitizer.clone(),
        }
    }

    async fn write(&self, entry: SessionEntry) {
        if let Some(w) = &self.writer {
            // A failed session write must not fail the run; close() reports it.
            let _ = w.append(SessionLine::now(entry)).await;
        }
    }

    async fn log(&self, level: &str, message: String) {
        self.write(SessionEntry::Log(LogLine {
            level: level.to_owned(),
            source: "supervisor".to_owned(),
            message,
        }))
        .await;
    }

    async fn limit(&self, limit: &str, value: u64, action: &str, detail: Option<String>) {
        self.write(SessionEntry::Limit(LimitLine {
            limit: limit.to_owned(),
            value,
            action: action.to_owned(),
            detail,
        }))
        .await;
    }

    fn lifecycle(&self, event: LifecycleEvent, result: Option<&SubagentResult>) -> SessionLine {
        let single = result.and_then(|r| r.details.results.first());
        let ended = result.is_some();
        let status = result.map(|r| {
            use subagent_protocol::session::LifecycleStatus;
            match event {
                LifecycleEvent::Aborted => LifecycleStatus::Aborted,
                _ if r.details.error.is_none() => LifecycleStatus::Completed,
                _ => LifecycleStatus::Failed,
            }
        });
        let summary = result.and_then(|r| {
            r.content.first().map(|c| match c {
                subagent_protocol::result::ContentItem::Text { text } => summarize(text),
            })
        });
        SessionLine::now(SessionEntry::AgentEvent(AgentEvent {
            event_type: event,
            job_id: self.run_id.clone(),
            requested_by: self.config.requested_by.clone(),
            agent_name: self.request.agent.clone(),
            mode: self.request.mode,
            pid: self.pid,
            started_at: self.started_at.clone(),
            completed_at: ended.then(subagent_protocol::time::now_rfc3339_ms),
            duration_ms: ended.then(|| duration_ms(self.started.elapsed())),
            model: single
                .and_then(|s| s.model.clone())
                .unwrap_or_else(|| self.request.provider.model.clone()),
            usage: single.map(|s| s.usage),
            status,
            summary,
            session_file: Some(self.paths.session_file.display().to_string()),
        }))
    }

    /// Writes a lifecycle line to the child's file and the parent's.
    async fn lifecycle_line(&self, event: LifecycleEvent, result: Option<&SubagentResult>) {
        let line = self.lifecycle(event, result);
        if let Some(parent) = &self.request.parent_session {
            if let Err(e) = append_to_parent(parent, &line) {
                self.log(
                    "warn",
                    format!("could not append the lifecycle line to the parent session file: {e}"),
                )
                .await;
            }
        }
        if let Some(w) = &self.writer {
            let _ = w.append(line).await;
        }
    }

    /// The ending lifecycle line, then close the session file.
    async fn finish(&mut self, result: &SubagentResult) {
        let aborted = result
            .details
            .error
            .as_ref()
            .is_some_and(|e| e.code == subagent_protocol::ErrorCode::SubagentCancelled);
        let event = if aborted {
            LifecycleEvent::Aborted
        } else if result.details.error.is_some() {
            LifecycleEvent::Error
        } else {
            LifecycleEvent::Complete
        };
        self.lifecycle_line(event, Some(result)).await;
        if let Some(w) = self.writer.take() {
            if let Err(e) = w.close().await {
                eprintln!("subagent: session file incomplete: {e}");
            }
        }
    }
}

/// Spawns the worker, drives it, and waits for the tree to be gone.
pub(super) async fn spawn_and_watch(
    ctx: &mut RunContext<'_>,
    spec: TaskSpec,
    cancel: CancellationToken,
) -> ChildRun {
    let header = SessionHeader {
        version: SESSION_FORMAT_VERSION,
        run_id: ctx.run_id.clone(),
        agent: ctx.request.agent.clone(),
        task: ctx.sanitizer.mask_secrets(&ctx.request.task),
        model: ctx.request.provider.model.clone(),
        provider: ctx.request.provider.kind.to_string(),
        cwd: ctx.request.workspace_dir.display().to_string(),
        depth: spec.depth,
        limits: ctx.request.limits.clone(),
        sandbox: Default::default(),
        parent_session: ctx
            .request
            .parent_session
            .as_ref()
            .map(|p| p.display().to_string()),
    };

    let (ours, theirs) = match StdUnixStream::pair() {
        Ok(pair) => pair,
        Err(e) => return ChildRun::setup_failed(format!("cannot create the worker socket: {e}")),
    };
    let sandbox_spec = sandbox_spec(ctx, OwnedFd::from(theirs));
    let child = match subagent_sandbox::spawn(sandbox_spec).await {
        Ok(child) => child,
        Err(e) => {
            let header = SessionHeader {
                sandbox: assemble::refused_status(&e).unwrap_or_default(),
                ..header
            };
            ctx.write(SessionEntry::Session(header)).await;
            ctx.lifecycle_line(LifecycleEvent::Start, None).await;
            return ChildRun::spawn_failed(&e);
        }
    };
    ctx.pid = Some(child.pid());
    let sandbox_status = child.status().clone();
    ctx.write(SessionEntry::Session(SessionHeader {
        sandbox: sandbox_status.clone(),
        ..header
    }))
    .await;
    ctx.lifecycle_line(LifecycleEvent::Start, None).await;
    for missing in &sandbox_status.not_applied {
        ctx.log(
            "warn",
            format!(
                "protection not applied: {} ({})",
                missing.protection, missing.reason
            ),
        )
        .await;
    }
    if !spec.system_prompt.is_empty() {
        ctx.write(message(
            Role::System,
            ctx.sanitizer.mask_secrets(&spec.system_prompt),
        ))
        .await;
    }
    ctx.write(message(Role::User, ctx.sanitizer.mask_secrets(&spec.task)))
        .await;

    let killer = child.killer();
    let wait = tokio::spawn(child.wait());
    let mut watch = watch_worker(ctx, ours, spec, killer, wait, cancel).await;
    let exit = match watch.exit.take() {
        Some(Ok(exit)) => exit,
        Some(Err(e)) => {
            // The wait task panicked; the sandbox's drop guard has killed the tree.
            return ChildRun {
                sandbox: Some(sandbox_status),
                ..ChildRun::setup_failed(format!("lost track of the worker: {e}"))
            };
        }
        None => {
            return ChildRun {
                sandbox: Some(sandbox_status),
                ..ChildRun::setup_failed("lost track of the worker".to_owned())
            };
        }
    };
    record_exit(ctx, &exit, &watch).await;
    ChildRun {
        outcome: watch.outcome,
        record: watch.record,
        cause: watch.cause,
        exit: Some(exit),
        sandbox: Some(sandbox_status),
        setup_error: None,
    }
}

fn message(role: Role, text: String) -> SessionEntry {
    SessionEntry::Message(MessageLine {
        role,
        turn: 0,
        text,
        stop_reason: None,
    })
}

fn sandbox_spec(ctx: &RunContext<'_>, protocol_fd: OwnedFd) -> SandboxSpec {
    let limits = &ctx.request.limits;
    let mut env = subagent_sandbox::allowlisted_env(subagent_sandbox::DEFAULT_ENV_ALLOWLIST);
    env.push(("SUBAGENT_PROTOCOL_FD".into(), "3".into()));
    SandboxSpec {
        program: ctx.config.worker.program.clone(),
        args: ctx.config.worker.args.clone(),
        cwd: ctx.request.workspace_dir.clone(),
        env,
        protocol_fd: Some(protocol_fd),
        limits: subagent_sandbox::ResourceLimits::from_limits(limits),
        policy: ctx.config.sandbox_policy,
        capture: subagent_sandbox::CaptureLimits {
            stdout_hard_bytes: limits.stdout_bytes,
            stderr_hard_bytes: limits.stderr_bytes,
            keep_head_bytes: CAPTURE_KEEP,
            keep_tail_bytes: CAPTURE_KEEP,
        },
        grace: Duration::from_millis(limits.kill_grace_ms),
    }
}

/// What watching the worker produced.
pub(super) struct Watch {
    outcome: Option<Outcome>,
    record: EventRecord,
    cause: Option<SupervisorCause>,
    exit: Option<Result<ChildExit, tokio::task::JoinError>>,
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

async fn watch_worker(
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
    // frame it sent has been read.
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
            _ = sleep_until(wall_deadline), if watch.cause.is_none() && !exited => {
                watch.cause = Some(SupervisorCause::WallTimeout);
                ctx.limit("wall_timeout", limits.wall_timeout_ms, "cancel", None).await;
                let _ = writer.write(&ToWorker::Cancel { reason: "wall timeout".into() }).await;
                escalate_at = Some(TokioInstant::now() + CANCEL_WINDOW);
            }
            _ = sleep_until(if hello_seen { idle_deadline } else { hello_deadline }), if watch.cause.is_none() && !exited => {
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

/// Session lines about how the process ended: limit hits and output excerpts.
async fn record_exit(ctx: &RunContext<'_>, exit: &ChildExit, watch: &Watch) {
    use subagent_protocol::session::{OutputLine, Stream};
    use subagent_sandbox::Termination;
    let limits = &ctx.request.limits;
    match &exit.termination {
        Termination::OutputLimit { stream } => {
            let (name, value) = match stream {
                Stream::Stdout => ("stdout", limits.stdout_bytes),
                Stream::Stderr => ("stderr", limits.stderr_bytes),
            };
            ctx.limit(
                name,
                value,
                "sigkill",
                Some("output hard limit reached; process group killed".into()),
            )
            .await;
        }
        Termination::MemoryLimit => {
            ctx.limit("memory", limits.memory_bytes, "oom_kill", None)
                .await
        }
        Termination::PidsLimit => ctx.limit("pids", limits.pids, "refused_fork", None).await,
        Termination::Leaked { pids } => {
            ctx.limit(
                "leaked_processes",
                pids.len() as u64,
                "sigkill",
                Some(format!(
                    "descendants still running after the worker exited: {pids:?}"
                )),
            )
            .await;
        }
        _ => {}
    }
    for (stream, captured) in [
        (Stream::Stdout, &exit.stdout),
        (Stream::Stderr, &exit.stderr),
    ] {
        if captured.bytes_seen > 0 {
            ctx.write(SessionEntry::Output(OutputLine {
                stream,
                excerpt: ctx.sanitizer.mask_secrets(&captured.lossy_text()),
                bytes_seen: captured.bytes_seen,
                bytes_kept: captured.bytes_kept,
                truncated: captured.truncated,
            }))
            .await;
        }
    }
    if watch.outcome.is_none() && !watch.record.partial_text.is_empty() {
        ctx.log(
            "info",
            format!(
                "partial assistant text before the worker ended: {}",
                ctx.sanitizer.mask_secrets(&watch.record.partial_text)
            ),
        )
        .await;
    }
}

fn task_spec(request: &RunRequest, agent: &AgentDefinition, run_id: &str) -> TaskSpec {
    let child_depth = request.caller_depth.saturating_add(1);
    let tools = request.tools.clone().unwrap_or_else(|| agent.tools.clone());
    TaskSpec {
        run_id: run_id.to_owned(),
        agent: request.agent.clone(),
        task: request.task.clone(),
        system_prompt: request
            .system_prompt
            .clone()
            .unwrap_or_else(|| agent.system_prompt.clone()),
        provider: request.provider.clone(),
        tools: tools_for_depth(tools, child_depth, request.max_depth),
        output_schema_json: request.output_schema_json.clone(),
        output_mode: request.output_mode,
        budget: request.budget,
        limits: request.limits.clone(),
        workspace_dir: request.workspace_dir.display().to_string(),
        depth: child_depth,
        max_depth: request.max_depth,
    }
}

/// 8 hex characters: the DESIGN's "8-char id" (a UUID v4 prefix).
fn new_run_id() -> String {
    uuid::Uuid::new_v4()
        .simple()
        .to_string()
        .chars()
        .take(8)
        .collect()
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// First line of the result text, cut to 200 characters, for lifecycle lines.
fn summarize(text: &str) -> String {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut s: String = first.chars().take(200).collect();
    if first.chars().count() > 200 {
        s.push('…');
    }
    s
}
