//! `subagent serve --stdio`: a JSON-lines server over the background-jobs
//! library ([`crate::jobs`]). Requests come one per line on
//! stdin (`spawn`, `status`, `wait`, `cancel`, `list`), each handled in a
//! task of its own so a `wait` never holds up a `status`; responses,
//! progress notifications and the endings of background jobs go out one
//! per line on stdout, and nothing else does: logs go to stderr.
//!
//! Stopping: when stdin closes, foreground jobs are cancelled (nobody is
//! left to read their answer) and background jobs run to their end (their
//! endings are recorded and `--notify-cmd` runs); then the server exits 0.
//! SIGINT or SIGTERM cancels every job, waits for their endings, exits 0.
//! SIGKILL leaves no child behind (workers die with the server) and the
//! next server marks the runs interrupted.
//!
//! The server's own session file (`--parent-session`, by default
//! `<sessions dir>/serve/serve-<pid>.jsonl`) receives every job's and every
//! child's lifecycle lines; it is flock-held while the server lives, so
//! the next server knows which files in `<sessions dir>/serve/` belong to
//! a dead one. See docs/serve.md.
//!
//! It owns this process's stdin and stdout while it runs; it never builds
//! the runtime (the caller does) and writes nothing to the terminal but
//! the protocol: messages for the operator go to the caller's [`Report`].

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use subagent_protocol::session::SessionLine;
use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::defaults::{Report, ServeDefaults, SpawnError, error_chain};
use super::io::{MAX_LINE_BYTES, Output, ReadLine, RequestLines};
use super::protocol::{self, Method, Request, ResponseCode, Spawn};
use crate::RunRequest;
use crate::interrupt::wait_for_interrupt;
use crate::jobs::{JobRequest, JobState, JobStatus, Jobs, JobsError};
use crate::prepare::PrepareError;
use crate::run::{Ceilings, Owner};

/// How long `--notify-cmd` may run before its process group is killed:
/// long enough to wake a harness, short enough that a hung command cannot
/// pile up one process per ending.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(10);

/// Requests read and not yet answered, bytes of their lines, each counted
/// as at least [`MIN_REQUEST_COST`] (16 MiB: 4,096 small requests, or one
/// line of the longest size). At the bound the server reads no further line
/// until one is answered, so a client's waits and unread answers cannot
/// grow it without end.
const IN_FLIGHT_BYTES: usize = 16 * 1024 * 1024;

/// What a request counts against [`IN_FLIGHT_BYTES`] at least, bytes (4 KiB):
/// its task, its parsed request and its answer's share of the queue.
const MIN_REQUEST_COST: usize = 4 * 1024;

/// Answers composed at once (4): the answers to `status`, `wait` and `list`
/// are built only when one of these is free, so thousands of unanswered
/// requests never hold thousands of built answers.
const COMPOSING: usize = 4;

/// What `serve --stdio` adds to a server's defaults.
#[derive(Debug, Clone, Default)]
pub struct StdioOptions {
    /// When a background run ends, run this (with `sh -c`) with its
    /// lifecycle line on stdin; it gets 10 s, and its failure is reported,
    /// not fatal.
    pub notify_cmd: Option<String>,
    /// The server's own session file [default: <sessions dir>/serve/serve-<pid>.jsonl].
    pub parent_session: Option<PathBuf>,
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The defaults alone do not make a run.
    #[error("serve --stdio: the server's flags must make a complete run by themselves")]
    Defaults(#[source] PrepareError),
    /// The jobs registry or the server's session file could not be set up.
    #[error(transparent)]
    Jobs(#[from] JobsError),
}

/// A JSON-lines server, prepared and not yet serving.
pub struct StdioServer {
    defaults: ServeDefaults,
    options: StdioOptions,
    prepared: crate::prepare::Prepared,
    report: Report,
}

impl StdioServer {
    /// Prepares the server's own run settings (refused when they are not
    /// a complete run) and its ceilings. Nothing starts yet.
    pub fn new(
        defaults: ServeDefaults,
        options: StdioOptions,
        report: Report,
    ) -> Result<Self, ServeError> {
        let prepared = defaults
            .prepare(&defaults.overrides)
            .map_err(ServeError::Defaults)?;
        Ok(Self {
            defaults,
            options,
            prepared,
            report,
        })
    }

    /// Serves on stdin and stdout until stdin closes or a signal arrives.
    /// Call it inside a multi-threaded runtime.
    pub async fn run(self) -> Result<(), ServeError> {
        let Self {
            defaults,
            options,
            prepared,
            report,
        } = self;
        let ceilings = Arc::new(prepared.ceilings(Owner::Server));
        tracing::info!(ceilings = ?ceilings.describe(), "every spawn is held under these ceilings");
        let serve_dir = prepared.config.sessions_dir.join("serve");
        let parent = options
            .parent_session
            .clone()
            .unwrap_or_else(|| serve_dir.join(format!("serve-{}.jsonl", std::process::id())));
        let (jobs, recovered) = Jobs::open(prepared.config, parent, serve_dir).await?;
        for run in recovered {
            tracing::info!(job = %run.start.job_id, file = %run.parent_file.display(), "marked a run of a dead server interrupted");
        }
        Server {
            defaults: Arc::new(defaults),
            ceilings,
            jobs,
            notify_cmd: options.notify_cmd,
            report,
            stopping: CancellationToken::new(),
            stopping_all: CancellationToken::new(),
        }
        .serve()
        .await;
        Ok(())
    }
}

/// What every request handler shares.
#[derive(Clone)]
struct Server {
    defaults: Arc<ServeDefaults>,
    /// What the defaults allow; every spawn is held under it.
    ceilings: Arc<Ceilings>,
    jobs: Jobs,
    notify_cmd: Option<String>,
    /// Messages for the operator.
    report: Report,
    /// Cancelled when stdin closes or a signal comes: a foreground job
    /// started from then on is cancelled at once.
    stopping: CancellationToken,
    /// Cancelled on a signal: any job started from then on is cancelled.
    stopping_all: CancellationToken,
}

impl Server {
    async fn serve(self) {
        let out = Output::start();
        let stop_forwarding = CancellationToken::new();
        let forwarders = [
            tokio::spawn(forward_progress(
                self.jobs.clone(),
                out.clone(),
                stop_forwarding.clone(),
            )),
            tokio::spawn(forward_endings(
                self.jobs.clone(),
                out.clone(),
                self.notify_cmd.clone(),
                Arc::clone(&self.report),
                stop_forwarding.clone(),
            )),
        ];
        let mut handlers = JoinSet::new();
        let mut lines = RequestLines::new(tokio::io::stdin(), MAX_LINE_BYTES);
        let in_flight = Arc::new(Semaphore::new(IN_FLIGHT_BYTES));
        let composing = Arc::new(Semaphore::new(COMPOSING));
        let signalled = tokio::select! {
            () = async {
                loop {
                    // Backpressure: no request is read while the client
                    // leaves the answers unread.
                    out.wait_for_room().await;
                    let line = match lines.next().await {
                        Ok(ReadLine::Line(line)) => line,
                        Ok(ReadLine::TooLong { bytes }) => {
                            out.send(protocol::line_too_long(bytes, MAX_LINE_BYTES)).await;
                            continue;
                        }
                        Ok(ReadLine::Eof) => break,
                        Err(e) => {
                            (self.report)(&format!("reading stdin failed ({e}); stopping"));
                            break;
                        }
                    };
                    let line = match String::from_utf8(line) {
                        Ok(line) if line.trim().is_empty() => continue,
                        Ok(line) => line,
                        Err(e) => {
                            out.send(protocol::not_utf8(e.utf8_error().valid_up_to()))
                                .await;
                            continue;
                        }
                    };
                    let cost = line.len().clamp(MIN_REQUEST_COST, IN_FLIGHT_BYTES);
                    let Ok(slot) = Arc::clone(&in_flight)
                        .acquire_many_owned(u32::try_from(cost).unwrap_or(u32::MAX))
                        .await
                    else {
                        break;
                    };
                    let this = self.clone();
                    let out = out.clone();
                    let composing = Arc::clone(&composing);
                    handlers.spawn(async move {
                        this.handle(&line, &out, &composing).await;
                        drop(slot);
                    });
                }
            } => false,
            () = signal() => true,
        };
        // From here no request starts: stdin is closed or a signal came.
        self.stopping.cancel();
        if signalled {
            self.stop_everything();
        }
        for status in self.jobs.list() {
            if !status.background {
                self.jobs.cancel(&status.job_id);
            }
        }
        // Handlers first (a spawn in flight registers its job), then every
        // job; a signal in the meantime still cancels them all.
        let drain = async {
            while handlers.join_next().await.is_some() {}
            self.jobs.wait_all().await;
        };
        tokio::select! {
            () = drain => {}
            () = signal(), if !signalled => {
                self.stop_everything();
                while handlers.join_next().await.is_some() {}
                self.jobs.wait_all().await;
            }
        }
        while handlers.join_next().await.is_some() {}
        stop_forwarding.cancel();
        for forwarder in forwarders {
            let _ = forwarder.await;
        }
        out.close();
    }

    fn stop_everything(&self) {
        self.stopping_all.cancel();
        self.jobs.cancel_all();
    }

    async fn handle(&self, line: &str, out: &Output, composing: &Semaphore) {
        let request = protocol::parse_line(line);
        // A `wait` first waits for its job's end without holding a place
        // among those composing; a foreground `spawn` holds none at all (its
        // answer is built once, when its run ends).
        let composed = match &request {
            Ok(Request {
                method: Method::Wait(job),
                ..
            }) => {
                let _ = self.jobs.wait(job).await;
                true
            }
            Ok(Request {
                method: Method::Spawn(_),
                ..
            }) => false,
            _ => true,
        };
        let place = if composed {
            composing.acquire().await.ok()
        } else {
            None
        };
        let text = match request {
            Ok(request) => self.answer(request).await,
            Err(bad) => protocol::error_response(&bad.id, bad.code, &bad.message),
        };
        out.send(text).await;
        drop(place);
    }

    async fn answer(&self, Request { id, method }: Request) -> String {
        let unknown = |job: &crate::jobs::JobId| {
            protocol::error_response(
                &id,
                ResponseCode::UnknownJob,
                &format!("no job has the id {job}"),
            )
        };
        match method {
            Method::Spawn(spawn) => match self.spawn(&spawn).await {
                Ok(result) => protocol::response(&id, result),
                Err(e) => {
                    let code = match e {
                        SpawnError::Ceiling(_) => ResponseCode::InvalidInput,
                        _ => ResponseCode::InvalidParams,
                    };
                    protocol::error_response(&id, code, &error_chain(&e))
                }
            },
            Method::Status(job) => match self.jobs.status(&job) {
                Some(status) => protocol::response(&id, to_json(&status)),
                None => unknown(&job),
            },
            Method::Wait(job) => {
                if self.jobs.status(&job).is_none() {
                    return unknown(&job);
                }
                let _ = self.jobs.wait(&job).await;
                match self.jobs.status(&job) {
                    Some(status) => protocol::response(&id, to_json(&status)),
                    None => unknown(&job),
                }
            }
            Method::Cancel(job) => match self.jobs.status(&job) {
                Some(_) => {
                    let cancelled = self.jobs.cancel(&job);
                    protocol::response(&id, json!({"jobId": job, "cancelled": cancelled}))
                }
                None => unknown(&job),
            },
            Method::List => {
                let jobs: Vec<Value> = self
                    .jobs
                    .list()
                    .into_iter()
                    .map(|status| {
                        to_json(&JobStatus {
                            result: None,
                            ..status
                        })
                    })
                    .collect();
                protocol::response(&id, json!({"jobs": jobs}))
            }
        }
    }

    /// Starts the job; a foreground one is waited for and its status (with
    /// the result) returned, a background one answers with its id at once.
    async fn spawn(&self, spawn: &Spawn) -> Result<Value, SpawnError> {
        let requests = self.requests(spawn).await?;
        let plan = spawn.plan(requests);
        let job = self.jobs.start(JobRequest {
            mode: plan.mode,
            requests: plan.requests,
            concurrency: plan.concurrency,
            background: spawn.background,
        })?;
        // Checked after the start: a stop before it is seen here, one after
        // it finds the job in the registry.
        if self.stopping_all.is_cancelled() || (!spawn.background && self.stopping.is_cancelled()) {
            self.jobs.cancel(&job);
        }
        if spawn.background {
            // `queued` when every concurrency slot is taken: it starts
            // when one frees.
            let state = self
                .jobs
                .status(&job)
                .map_or(JobState::Running, |s| s.state);
            return Ok(json!({"jobId": job, "state": state, "background": true}));
        }
        let _ = self.jobs.wait(&job).await;
        let status = self.jobs.status(&job).ok_or(SpawnError::Vanished)?;
        Ok(to_json(&status))
    }

    /// One resolved request per task: the server's flags patched by the
    /// spawn, under the server's ceilings.
    async fn requests(&self, spawn: &Spawn) -> Result<Vec<RunRequest>, SpawnError> {
        Arc::clone(&self.defaults)
            .requests_off_runtime(
                Arc::clone(&self.ceilings),
                spawn.patch(),
                spawn.tasks.clone(),
            )
            .await
            .map(|requests| spawn.traced(requests))
    }
}

/// Resolves on SIGINT or SIGTERM; never when signals cannot be watched.
async fn signal() {
    if !wait_for_interrupt().await {
        std::future::pending::<()>().await;
    }
}

fn to_json(status: &JobStatus) -> Value {
    serde_json::to_value(status).unwrap_or(Value::Null)
}

/// Progress of every job, as notifications; a lagging writer skips some
/// (progress is a view, never the result).
async fn forward_progress(jobs: Jobs, out: Output, stop: CancellationToken) {
    let mut rx = jobs.subscribe_progress();
    loop {
        tokio::select! {
            got = rx.recv() => match got {
                Ok(p) => out.offer(protocol::progress(&p.job_id, p.state, &p.streaming)),
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            },
            () = stop.cancelled() => return,
        }
    }
}

/// Background endings as notifications, and `--notify-cmd` for each. On
/// stop, drains what is queued (every job has ended by then) and waits for
/// the commands.
async fn forward_endings(
    jobs: Jobs,
    out: Output,
    notify_cmd: Option<String>,
    report: Report,
    stop: CancellationToken,
) {
    let mut rx = jobs.subscribe_endings();
    let mut commands = JoinSet::new();
    let mut on_ending = async |ending: crate::jobs::JobEnded| {
        if !ending.background {
            return;
        }
        if let Some(cmd) = notify_cmd.clone() {
            commands.spawn(run_notify(cmd, ending.line.clone(), Arc::clone(&report)));
        }
        out.send(protocol::ending(&ending.line)).await;
    };
    loop {
        tokio::select! {
            got = rx.recv() => match got {
                Ok(ending) => on_ending(ending).await,
                Err(RecvError::Lagged(n)) => {
                    report(&format!("{n} job endings were not announced (the writer fell behind); status and list still have them"));
                }
                Err(RecvError::Closed) => break,
            },
            () = stop.cancelled() => {
                while let Ok(ending) = rx.try_recv() {
                    on_ending(ending).await;
                }
                break;
            }
        }
    }
    while commands.join_next().await.is_some() {}
}

/// Runs `sh -c CMD` with the line on stdin, in a process group of its own
/// so a timeout kills whatever it started too. Its stdout is discarded: the
/// server's stdout is the protocol.
async fn run_notify(cmd: String, line: SessionLine, report: Report) {
    let mut text = serde_json::to_string(&line).unwrap_or_default();
    text.push('\n');
    let child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(&cmd)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .process_group(0)
        .kill_on_drop(true)
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => {
            report(&format!("--notify-cmd could not start: {e}"));
            return;
        }
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A command that does not read its stdin is not a failure.
        let _ = stdin.write_all(text.as_bytes()).await;
    }
    match tokio::time::timeout(NOTIFY_TIMEOUT, child.wait()).await {
        Ok(Ok(status)) if status.success() => {}
        Ok(Ok(status)) => report(&format!("--notify-cmd failed: {status}")),
        Ok(Err(e)) => report(&format!("--notify-cmd could not be waited for: {e}")),
        Err(_) => {
            if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            let _ = child.wait().await;
            report(&format!(
                "--notify-cmd did not finish in {} s and was killed",
                NOTIFY_TIMEOUT.as_secs()
            ));
        }
    }
}
