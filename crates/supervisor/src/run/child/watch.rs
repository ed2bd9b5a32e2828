//! Watching a running worker: the handshake, `Start`, every frame it sends,
//! wall and idle timeouts with Cancel-then-terminate escalation, protocol
//! violations and the protocol traffic cap. Returns when the worker's tree is
//! gone and every frame it sent has been read.
//!
//! A small state machine: [`Watch`] holds what is known, the loop in
//! [`watch_worker`] waits for the next [`Event`] and hands it to one
//! handler. Handlers never wait on the worker: messages to it are queued on
//! the [`Link`], so a worker that stops reading cannot hold off a timeout.
//!
//! Where the run is lives in one [`Phase`]; it decides *why* the
//! supervisor intervened ([`StopCause`]), and [`crate::run::record::stop`] says how that
//! cause stops the worker and what it writes; turning it into a result is
//! [`crate::run::record::assemble`]'s job.
//!
//! Nested subagents the worker asks for are admitted here (depth, budget
//! reservation: [`crate::run::admit::admission::admit_spawn`], in [`spawns`]) and run as futures this loop drives beside the worker,
//! never detached: their cancellation token is a child of the run's, fired
//! as soon as the parent stops running for any reason, and the loop ends
//! only once every one of them has ended.

use std::future::Future;
use std::os::unix::net::UnixStream as StdUnixStream;
use std::pin::Pin;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::OptionFuture;
use futures_util::stream::FuturesUnordered;

use subagent_protocol::message::LogLevel;
use subagent_protocol::session::{LimitAction, LimitKind};
use subagent_protocol::tool_names::PYTHON_EXECUTE;
use subagent_protocol::{
    FromWorker, Hello, Outcome, PROTOCOL_VERSION, PythonInterpreter, TaskSpec, ToWorker, Usage,
    WorkerEvent,
};
use subagent_sandbox::{ChildExit, KillHandle, SandboxedChild};
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use crate::run::admit::reservation::BudgetShare;
use crate::run::child::context::RunContext;
use crate::run::child::link::{Inbound, Link, Outbound};
use crate::run::child::nested::{NestedDone, NestedRun};
use crate::run::config::{CANCEL_WINDOW, EXIT_AFTER_DONE, HELLO_TIMEOUT};
use crate::run::progress::events::{ContentEvent, ProgressEvent};
use crate::run::record::events::EventRecord;
use crate::run::record::stop::{self, ProtocolBreak, StopCause, StopHow};

mod phase;
mod spawns;

use phase::Phase;

/// What watching the worker produced.
pub(in crate::run) struct Watched {
    pub(in crate::run) outcome: Option<Outcome>,
    pub(in crate::run) record: EventRecord,
    pub(in crate::run) cause: Option<StopCause>,
    pub(in crate::run) exit: ChildExit,
    /// What the nested subagents it started spent.
    pub(in crate::run) nested_usage: Usage,
}

/// Everything the loop waits for.
enum Event {
    /// The caller's cancellation token fired.
    Cancel,
    /// A deadline passed.
    Timer(Timer),
    /// The socket produced something (`None`: the reader is gone).
    Inbound(Option<Inbound>),
    /// The worker's tree is dead and reaped.
    Exit(ChildExit),
    /// A nested subagent ended.
    Nested(NestedDone),
    /// The interpreter the task said was pending is known.
    Python(PythonInterpreter),
}

/// The answer to the Python question a pending task waits for.
type PythonLater = Pin<Box<dyn Future<Output = PythonInterpreter> + Send>>;

/// The deadlines of a run; at most one is next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timer {
    /// No `Hello` in time.
    Hello,
    /// The wall timeout.
    Wall,
    /// No progress for the idle timeout.
    Idle,
    /// The worker did not end after `Cancel` (or after `Done`): terminate.
    Escalate,
}

/// One run's watch: its phase, the state of its two channels (frames and
/// the tree's exit), and the deadlines still running.
struct Watch<'c, 'a> {
    ctx: &'c RunContext<'a>,
    link: Link,
    killer: KillHandle,
    /// Sent once, after a matching `Hello`.
    spec: Option<Box<TaskSpec>>,
    wall_deadline: Instant,
    hello_deadline: Instant,
    idle: Duration,
    idle_deadline: Instant,
    phase: Phase,
    /// The reader may still hand over frames.
    frames_open: bool,
    /// The tree is dead and reaped.
    exit: Option<ChildExit>,
    record: EventRecord,
    /// The budget the worker shares with its nested subagents.
    share: BudgetShare,
    /// Cancels every nested subagent of this run (a child of the run's
    /// own token).
    subtree: CancellationToken,
    /// Nested runs admitted by the last handler, for the loop to drive.
    starting: Vec<NestedRun<'a>>,
    /// Nested runs not yet ended.
    nested_running: usize,
    /// The task said the Python interpreter was pending and nothing has
    /// asked for it yet. The supervisor asks `python3` only once the model
    /// calls `python_execute` (the worker's `tool_call` event comes before
    /// the call runs), so a run, or a batch, that never runs Python never
    /// pays the question's CPU beside the model server's (through pyenv's
    /// shim about 90 ms of bash scripts).
    python_pending: bool,
    /// The answer being asked for; boxed, and only while asked: most runs
    /// never hold it.
    python_later: Option<PythonLater>,
}

pub(in crate::run) async fn watch_worker(
    ctx: &RunContext<'_>,
    socket: StdUnixStream,
    spec: Box<TaskSpec>,
    child: SandboxedChild,
    cancel: CancellationToken,
) -> Watched {
    let killer = child.killer();
    let exit_hint = child.exit_hint();
    let mut exit_hinted = false;
    // Polled here, never spawned: if this future is dropped (a caller's
    // timeout around the run), the child goes with it and its drop guard
    // kills the tree. A spawned wait would outlive the run and leave the
    // worker running.
    let mut wait = std::pin::pin!(child.wait());
    let stream = match socket
        .set_nonblocking(true)
        .and_then(|()| tokio::net::UnixStream::from_std(socket))
    {
        Ok(s) => s,
        Err(e) => {
            let cause = StopCause::Protocol(
                ProtocolBreak::SocketSetup,
                format!("cannot use the worker socket: {e}"),
            );
            killer.kill_now(cause.kill_reason());
            return Watched {
                outcome: None,
                record: EventRecord::default(),
                cause: Some(cause),
                exit: wait.await,
                nested_usage: Usage::default(),
            };
        }
    };
    let (read, write) = stream.into_split();
    let (link, mut inbox) = Link::start(read, write, ctx.request.limits.protocol_bytes);
    let subtree = cancel.child_token();
    let mut watch = Watch::new(ctx, link, killer, spec, subtree.clone());
    let mut nested: FuturesUnordered<NestedRun<'_>> = FuturesUnordered::new();

    // Ends when the worker's tree is gone, every frame it sent has been
    // read and every nested run has ended. `biased`: a cancel or a deadline
    // is seen before more frames.
    loop {
        let timer = watch.next_timer();
        let event = tokio::select! {
            biased;
            () = cancel.cancelled(), if watch.hears_cancel() => Event::Cancel,
            () = sleep_until(timer.map_or_else(Instant::now, |(at, _)| at)), if timer.is_some() => {
                Event::Timer(timer.map_or(Timer::Escalate, |(_, which)| which))
            }
            inbound = inbox.recv(), if watch.frames_open => Event::Inbound(inbound),
            exit = &mut wait, if watch.exit.is_none() => Event::Exit(exit),
            Some(done) = nested.next(), if !nested.is_empty() => Event::Nested(done),
            Some(python) = OptionFuture::from(watch.python_later.as_mut()),
                if watch.python_later.is_some() && watch.phase.working() => Event::Python(python),
        };
        // Boxed: the handlers' futures (3.3 KiB here) would otherwise be
        // part of this loop's state for the worker's whole life, 3 MiB of a
        // supervisor holding 1,000 live workers; an allocation per event is
        // nothing beside the frame it handles.
        Box::pin(watch.handle(event)).await;
        if !exit_hinted && (!watch.frames_open || watch.phase.outcome().is_some()) {
            // The worker's socket is shut or it has said Done: it has
            // exited or is about to, so its exit is watched through a pidfd
            // from now on (see `ExitNotice::AfterHangUp`).
            exit_hint.leader_may_have_exited();
            exit_hinted = true;
        }
        nested.extend(watch.starting.drain(..));
        if !watch.parent_running() {
            // Nobody will read a nested result any more: the subtree goes.
            subtree.cancel();
        }
        if let Some(exit) = watch.take_exit_if_over(nested.is_empty()) {
            return watch.into_watched(exit);
        }
    }
}

impl<'c, 'a> Watch<'c, 'a> {
    fn new(
        ctx: &'c RunContext<'a>,
        link: Link,
        killer: KillHandle,
        spec: Box<TaskSpec>,
        subtree: CancellationToken,
    ) -> Self {
        let limits = &ctx.request.limits;
        let share = BudgetShare::new(spec.budget);
        let python_pending = matches!(spec.python, Some(PythonInterpreter::Pending));
        let record = EventRecord::new(&spec.tools, &spec.history);
        let now = Instant::now();
        let wall = Duration::from_millis(limits.wall_timeout_ms);
        let idle = Duration::from_millis(limits.idle_timeout_ms);
        Self {
            ctx,
            link,
            killer,
            spec: Some(spec),
            wall_deadline: now + wall,
            hello_deadline: now + HELLO_TIMEOUT.min(wall),
            idle,
            idle_deadline: now + idle,
            phase: Phase::AwaitingHello,
            frames_open: true,
            exit: None,
            record,
            share,
            subtree,
            starting: Vec::new(),
            nested_running: 0,
            python_pending,
            python_later: None,
        }
    }

    /// The exit, once the tree is gone, every frame has been read and no
    /// nested run is left.
    fn take_exit_if_over(&mut self, nested_over: bool) -> Option<ChildExit> {
        if self.frames_open || !nested_over {
            return None;
        }
        self.exit.take()
    }

    /// Whether the worker may still use a nested result: no `Done`, no
    /// intervention, alive and reading.
    fn parent_running(&self) -> bool {
        self.phase.working() && self.exit.is_none() && self.frames_open
    }

    fn into_watched(self, exit: ChildExit) -> Watched {
        let nested_usage = self.share.nested_spent();
        let (outcome, cause) = self.phase.into_ending();
        Watched {
            outcome,
            record: self.record,
            cause,
            exit,
            nested_usage,
        }
    }

    /// A cancel matters until the supervisor has a cause of its own or the
    /// worker is gone.
    fn hears_cancel(&self) -> bool {
        self.phase.hears_cancel() && self.exit.is_none()
    }

    /// The deadline that comes next, if any. Once `Done` is in (or the
    /// supervisor has intervened), wall and idle timers no longer apply, only
    /// the escalation deadline. On a tie the wall timeout wins.
    fn next_timer(&self) -> Option<(Instant, Timer)> {
        if self.exit.is_some() {
            return None;
        }
        let running = self.phase.working();
        // A worker waiting on a nested subagent is quiet by design; the
        // subagent has idle and wall timeouts of its own.
        let waiting_on_nested = self.nested_running > 0;
        let quiet = if self.phase.greeted() {
            (self.idle_deadline, Timer::Idle)
        } else {
            (self.hello_deadline, Timer::Hello)
        };
        [
            running.then_some((self.wall_deadline, Timer::Wall)),
            (running && !waiting_on_nested).then_some(quiet),
            self.phase.escalate_at().map(|at| (at, Timer::Escalate)),
        ]
        .into_iter()
        .flatten()
        .min_by_key(|(at, _)| *at)
    }

    async fn handle(&mut self, event: Event) {
        match event {
            Event::Cancel => self.on_cancel().await,
            Event::Timer(Timer::Wall) => self.intervene(StopCause::WallTimeout).await,
            Event::Timer(Timer::Idle) => self.intervene(StopCause::IdleTimeout).await,
            Event::Timer(Timer::Hello) => self.on_hello_timeout(),
            Event::Timer(Timer::Escalate) => self.on_escalate().await,
            Event::Inbound(inbound) => self.on_inbound(inbound).await,
            Event::Exit(exit) => self.exit = Some(exit),
            Event::Nested(done) => self.on_nested_done(done),
            Event::Python(python) => self.on_python(python).await,
        }
    }

    /// The interpreter the task said was pending, asked for by its first
    /// `python_execute` call (so after `Start`): sent, and recorded, since
    /// the session header could not name it.
    async fn on_python(&mut self, python: PythonInterpreter) {
        self.python_later = None;
        let line = match &python {
            PythonInterpreter::Found { executable, .. } => {
                format!("python_execute runs {executable} (resolved after the run started)")
            }
            PythonInterpreter::Missing { reason } => {
                format!("python_execute has no interpreter: {reason}")
            }
            PythonInterpreter::Pending => return,
        };
        let sent = self.link.send(ToWorker::Python(python));
        self.ctx.journal.log(LogLevel::Info, line).await;
        if let Err(e) = sent {
            self.ctx
                .journal
                .log(
                    LogLevel::Error,
                    format!("could not send the Python interpreter to the worker: {e}"),
                )
                .await;
        }
    }

    async fn on_cancel(&mut self) {
        if self.phase.outcome().is_some() {
            self.phase.hear_cancel_after_done();
            // `Done` is in: the run's outcome is fixed. The worker is only
            // told to stop lingering; the exit-after-Done deadline stands.
            self.ctx
                .journal
                .log(
                    LogLevel::Info,
                    "cancelled by the caller after the worker reported its result; the result stands".into(),
                )
                .await;
            let _ = self.link.send(ToWorker::Cancel {
                reason: "cancelled by the caller".into(),
            });
            return;
        }
        self.intervene(StopCause::Cancelled).await;
    }

    fn on_hello_timeout(&mut self) {
        tracing::warn!(
            run_id = %self.ctx.run_id,
            "no Hello from the worker in time; terminating it"
        );
        self.stop(StopCause::Protocol(
            ProtocolBreak::NoHello,
            stop::no_hello_message(),
        ));
    }

    /// The supervisor stops the worker for `cause`: its limit line, if it
    /// is a limit, then the stop [`StopCause::how`] says.
    async fn intervene(&mut self, cause: StopCause) {
        if let Some(hit) = cause.limit_hit(&self.ctx.request.limits) {
            self.ctx.journal.limit_hit(hit).await;
        }
        self.stop(cause);
    }

    /// Records `cause` as the phase's and stops the worker the way the
    /// ending table says.
    fn stop(&mut self, cause: StopCause) {
        self.ctx.live.finishing();
        let how = cause.how();
        let reason = cause.kill_reason();
        self.phase.stop(cause, Instant::now(), CANCEL_WINDOW);
        match how {
            // Gives the worker [`CANCEL_WINDOW`] to send `Done` with its
            // partial output before it is terminated; a refused Cancel
            // needs no line: the escalation follows anyway.
            StopHow::CancelFirst(why) => {
                let _ = self.link.send(ToWorker::Cancel {
                    reason: why.to_owned(),
                });
            }
            StopHow::Terminate => self.killer.terminate(reason),
            StopHow::KillNow => self.killer.kill_now(reason),
        }
    }

    /// The worker had its window to end by itself: SIGTERM to its group,
    /// SIGKILL after the grace (the sandbox runs that part).
    async fn on_escalate(&mut self) {
        let reason = self.phase.escalate();
        let grace = self.ctx.request.limits.kill_grace_ms;
        tracing::warn!(
            run_id = %self.ctx.run_id,
            ?reason,
            grace_ms = grace,
            "worker still running: SIGTERM to its group, SIGKILL after the grace"
        );
        self.ctx
            .journal
            .limit(
                LimitKind::KillGrace,
                grace,
                LimitAction::Sigterm,
                Some("worker still running; SIGTERM to its group, SIGKILL after the grace".into()),
            )
            .await;
        self.killer.terminate(reason);
    }

    async fn on_inbound(&mut self, inbound: Option<Inbound>) {
        match inbound {
            None | Some(Inbound::Eof) => self.frames_open = false,
            Some(Inbound::Broken(e)) => {
                self.frames_open = false;
                if !e.is_disconnect() && self.phase.cause().is_none() {
                    self.stop(StopCause::Protocol(
                        ProtocolBreak::Violation,
                        format!("the worker broke the protocol: {e}"),
                    ));
                    self.ctx
                        .journal
                        .log(
                            LogLevel::Error,
                            format!("protocol violation: {e}; killing the worker"),
                        )
                        .await;
                }
            }
            Some(Inbound::Flood) => {
                // The reader stopped at the cap; nothing more will come.
                self.frames_open = false;
                if self.phase.cause().is_none() {
                    self.intervene(StopCause::ProtocolFlood).await;
                }
            }
            Some(Inbound::WriteFailed { what, error }) => {
                // A failed Cancel needs no line: the escalation follows anyway.
                if what == Outbound::Start {
                    self.ctx
                        .journal
                        .log(
                            LogLevel::Error,
                            format!("could not send Start to the worker: {error}"),
                        )
                        .await;
                }
            }
            Some(Inbound::Message { message, held }) => {
                self.on_message(message).await;
                drop(held);
            }
        }
    }

    async fn on_message(&mut self, message: FromWorker) {
        match message {
            FromWorker::Hello(hello) if !self.phase.greeted() => self.on_hello(hello).await,
            FromWorker::Hello(_) => self.violation("the worker sent Hello twice"),
            _ if !self.phase.greeted() => self.violation("the worker sent a message before Hello"),
            FromWorker::Event(event) => {
                self.ctx.live.observe(&event);
                if self.python_pending
                    && matches!(&event, WorkerEvent::ToolCall { name, .. } if name == PYTHON_EXECUTE)
                {
                    self.python_pending = false;
                    self.python_later = Some(Box::pin(crate::run::child::python::resolved()));
                }
                let run_id = &self.ctx.run_id;
                let shown = ProgressEvent::of_worker_event(run_id, &event);
                let usage = matches!(event, WorkerEvent::Usage { .. });
                let content = self.ctx.config.content.as_ref().and_then(|sink| {
                    ContentEvent::of_worker_event(run_id, &event, |t| {
                        self.ctx.sanitizer.mask_secrets(t)
                    })
                    .map(|c| (sink, c))
                });
                self.ctx
                    .spans
                    .on_event(&event, &|t| self.ctx.sanitizer.mask_secrets(t));
                let (line, progress) = self.record.observe(event, &self.ctx.sanitizer);
                if let Some(shown) = shown {
                    self.ctx.progress(|| shown);
                }
                if self.record.todos_changed {
                    let list = self.record.todos.current();
                    self.ctx.progress(|| ProgressEvent::todos(run_id, list));
                }
                if let Some((sink, content)) = content {
                    sink.emit(&content);
                }
                if usage {
                    self.ctx.progress(|| {
                        ProgressEvent::usage(
                            run_id,
                            &self.record.usage,
                            self.record.last_stop_reason.as_deref(),
                        )
                    });
                }
                if progress {
                    self.idle_deadline = Instant::now() + self.idle;
                }
                if let Some(line) = line {
                    self.ctx.journal.append(line).await;
                }
            }
            FromWorker::Pong => {}
            FromWorker::SpawnSubagent(request) => self.on_spawn(*request).await,
            FromWorker::Done(outcome) => {
                self.ctx.live.finishing();
                if self
                    .phase
                    .report(*outcome, Instant::now(), EXIT_AFTER_DONE)
                    .is_err()
                {
                    self.violation("the worker sent Done twice");
                }
            }
        }
    }

    async fn on_hello(&mut self, hello: Hello) {
        self.phase.greet();
        if hello.protocol_version != PROTOCOL_VERSION {
            self.stop(StopCause::Protocol(
                ProtocolBreak::VersionMismatch,
                format!(
                    "worker {} speaks protocol v{} but this supervisor speaks v{}; install the worker and supervisor from the same build",
                    hello.worker_version, hello.protocol_version, PROTOCOL_VERSION
                ),
            ));
            return;
        }
        self.idle_deadline = Instant::now() + self.idle;
        if let Some(spec) = self.spec.take()
            && let Err(e) = self.link.send(ToWorker::Start(spec))
        {
            self.ctx
                .journal
                .log(
                    LogLevel::Error,
                    format!("could not send Start to the worker: {e}"),
                )
                .await;
        }
    }

    /// A broken rule of the protocol: the first one is the cause, and the
    /// worker is killed at once.
    fn violation(&mut self, what: &str) {
        if self.phase.cause().is_none() {
            tracing::warn!(
                run_id = %self.ctx.run_id,
                what,
                "protocol violation; killing the worker"
            );
            self.stop(StopCause::Protocol(
                ProtocolBreak::Violation,
                what.to_owned(),
            ));
        }
    }
}
