//! One child's life: session file and lifecycle start, spawn under the
//! sandbox, handshake, `Start`, events into the session file, wall and idle
//! timeouts with Cancel-then-kill escalation, and the wait for the whole tree
//! to be dead and reaped. The outcome goes to [`crate::run::record::assemble`].
//!
//! This is the only place that talks to a worker. It must never return before
//! the worker's tree is dead: the sandbox's `wait` guarantees that, and its
//! drop guard covers early returns.

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream as StdUnixStream;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use subagent_protocol::message::LogLevel;
use subagent_protocol::result::SubagentResult;
use subagent_protocol::session::{
    LifecycleEvent, LimitAction, LimitKind, MessageLine, ResumedFrom, Role, SESSION_FORMAT_VERSION,
    SessionEntry, SessionHeader,
};
use subagent_protocol::{ErrorCode, PythonInterpreter, TaskSpec};
use subagent_sandbox::{SandboxStatus, SandboxedChild};
use tokio_util::sync::CancellationToken;

use crate::agents::AgentDefinition;
use crate::live::LiveRun;
use crate::request::{RunRequest, new_run_id};
use crate::run::admit::admission::SpawnTree;
use crate::run::admit::spec;
use crate::run::admit::workspace::AdmittedWorkspace;
use crate::run::child::context::RunContext;
use crate::run::child::layered::{self, LiveLayer};
use crate::run::child::nested::NestedRunner;
use crate::run::child::watch::{Watched, watch_worker};
use crate::run::config::SupervisorConfig;
use crate::run::progress::events::ProgressEvent;
use crate::run::record::assemble::{self, ChildRun};
use crate::run::record::journal::{RunJournal, mark_session_lost};
use crate::run::record::stop::StopCause;
use crate::sanitize::Sanitizer;
use crate::session::{SessionPaths, SessionWriter, SessionWriterError};

/// How a run that passed admission goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::run) enum Begin {
    /// It has its slot: spawn the worker and watch it.
    Spawn,
    /// It was cancelled while it waited for one of the `limit` slots:
    /// recorded as a cancelled run, no worker is ever spawned.
    CancelledInQueue { limit: usize },
}

/// A request past admission, with what it was admitted as.
pub(in crate::run) struct ToRun {
    /// Boxed: a run's future keeps what it was called with for its whole
    /// life, so everything inline here is paid by every live run.
    pub request: Box<RunRequest>,
    pub agent: AgentDefinition,
    /// The workspace as admitted; `None` for a run that never starts.
    pub workspace: Option<AdmittedWorkspace>,
    /// The id it asks for first: the one its progress events named while
    /// it queued.
    pub run_id: String,
    pub begin: Begin,
    /// Its live record, for `subagent ps`, if it was made while the run
    /// queued (else it is made beside the session file).
    pub live: Option<LiveRun>,
}

/// Runs one admitted request to its result; `tree` is the spawn tree its
/// nested subagents count against.
pub(in crate::run) async fn run_child(
    config: &SupervisorConfig,
    runner: &dyn NestedRunner,
    run: ToRun,
    cancel: CancellationToken,
    tree: Arc<SpawnTree>,
) -> SubagentResult {
    let ToRun {
        request,
        agent,
        workspace,
        run_id,
        begin,
        live,
    } = run;
    let started_wall = SystemTime::now();
    let started_at = subagent_protocol::time::rfc3339_ms(started_wall);
    let started = Instant::now();
    let api_key = request
        .provider
        .api_key
        .as_ref()
        .map(|k| k.expose().to_owned());
    let sanitizer = Sanitizer::new(api_key, std::env::var("HOME").ok());
    // In a block: what only the start needs (the agent, the probe spec,
    // the session file's creation) is gone from this future before the
    // worker's long wait; the block's future is boxed for the same reason.
    let (spec, mut ctx) = {
        let protected = workspace
            .as_ref()
            .map(|w| w.protected.clone())
            .unwrap_or_default();
        let prepared = Box::pin(prepare(
            config,
            &request,
            agent,
            run_id,
            started_wall,
            protected,
        ))
        .await;
        let (spec, run_id, paths, created) = match prepared {
            Ok(prepared) => prepared,
            Err(refusal) => return *refusal,
        };
        let journal = RunJournal::new(
            run_id.clone(),
            config.requested_by.clone(),
            &request,
            paths,
            started_at,
            started,
        );
        let live = match live {
            Some(live) if live.run_id().is_some_and(|id| id == run_id) => live,
            _ => LiveRun::begin(
                &config.sessions_dir,
                &run_id,
                &request.agent,
                &request.provider.model,
                request.parent_session.as_deref(),
            ),
        };
        live.session_file(&journal.paths().session_file);
        let mut ctx = RunContext {
            config,
            runner,
            tree,
            request: &request,
            workspace,
            run_id,
            started,
            sanitizer,
            journal,
            layer: None,
            spans: crate::telemetry::RunSpans::off(),
            live,
        };
        ctx.spans = crate::telemetry::current().run_spans(
            crate::telemetry::RunStart {
                run_id: &ctx.run_id,
                agent: &request.agent,
                model: &request.provider.model,
                provider: request.provider.kind,
                task: &ctx.sanitizer.mask_secrets(&request.task),
            },
            request.trace_parent.as_ref(),
        );
        match created {
            Ok(writer) => ctx.journal.opened(writer),
            Err(e) => {
                let mut result = assemble::setup_failure(
                    &ctx.assembly(),
                    format!("cannot create the session file: {e}"),
                );
                mark_session_lost(&mut result, &e);
                return result;
            }
        }
        (Box::new(spec), ctx)
    };
    tracing::debug!(
        run_id = %ctx.run_id,
        file = %ctx.journal.paths().session_file.display(),
        "session file created"
    );

    let run_id = ctx.run_id.clone();
    let run = match begin {
        Begin::Spawn => spawn_and_watch(&mut ctx, spec, cancel).await,
        Begin::CancelledInQueue { limit } => Box::pin(cancelled_in_queue(&ctx, &spec, limit)).await,
    };
    // Boxed, as the other steps around the worker's life: only the watch
    // of a live worker is in this future's size (see `spawn_and_watch`).
    let mut result = Box::pin(assemble::assemble_blocking(ctx.assembly(), run)).await;
    if let Some(layer) = ctx.layer.take() {
        let protected = ctx
            .workspace
            .as_ref()
            .map(|w| w.protected.clone())
            .unwrap_or_default();
        let sessions_dir = ctx.config.sessions_dir.clone();
        let settled = layer.settle_into(
            ctx.request,
            &ctx.run_id,
            sessions_dir,
            &protected,
            &ctx.journal,
            &mut result,
        );
        Box::pin(settled).await;
    }
    if let Some(resume) = &request.resume {
        for single in &mut result.details.results {
            single.continued_from = Some(resume.turns);
        }
    }
    ctx.spans.end(&result);
    let dropped = ctx.spans.dropped_during_run();
    if dropped > 0 {
        ctx.journal
            .log(
                LogLevel::Warn,
                format!(
                    "telemetry: {dropped} trace spans dropped while this run ran (the export queue was full); the run was not slowed"
                ),
            )
            .await;
    }
    if let Err(e) = Box::pin(ctx.journal.finish(&result)).await {
        mark_session_lost(&mut result, &e);
    }
    ctx.progress(|| ProgressEvent::Ended {
        run_id,
        error: result.details.error.as_ref().map(|e| e.code),
    });
    result
}

/// What a run needs before its worker starts: its task spec (with the
/// Python its tools will use), checked to fit a frame, and its session
/// file, created under the id it asked for (another if that one is taken).
async fn prepare(
    config: &SupervisorConfig,
    request: &RunRequest,
    agent: AgentDefinition,
    run_id: String,
    started_wall: SystemTime,
    protected: Vec<std::path::PathBuf>,
) -> Result<
    (
        TaskSpec,
        String,
        SessionPaths,
        Result<SessionWriter, SessionWriterError>,
    ),
    Box<SubagentResult>,
> {
    let mut probe_spec = spec::task_spec(request, &agent, &new_run_id(), config.sandbox_policy);
    probe_spec.mcp_servers = spec::mcp_servers(config, request, &agent)
        .map_err(|message| Box::new(SubagentResult::refusal(ErrorCode::InvalidInput, message)))?;
    probe_spec.python = crate::run::child::python::for_tools(&probe_spec.tools);
    probe_spec.protected_paths = protected.iter().map(|p| p.display().to_string()).collect();
    if let Err(message) = spec::check_spec_fits(&probe_spec) {
        return Err(Box::new(SubagentResult::refusal(
            ErrorCode::InvalidInput,
            message,
        )));
    }
    if let Err(message) = spec::check_network_stack(&probe_spec) {
        return Err(Box::new(SubagentResult::refusal(
            ErrorCode::SubagentSandboxUnavailable,
            message,
        )));
    }
    let mut wanted = Some(run_id);
    let (run_id, paths, created) =
        create_session_file(config, &request.agent, started_wall, || {
            wanted.take().unwrap_or_else(new_run_id)
        });
    let spec = TaskSpec {
        run_id: run_id.clone(),
        ..probe_spec
    };
    Ok((spec, run_id, paths, created))
}

/// Spawns the worker, drives it, and waits for the tree to be gone.
pub(in crate::run) async fn spawn_and_watch(
    ctx: &mut RunContext<'_>,
    spec: Box<TaskSpec>,
    cancel: CancellationToken,
) -> ChildRun {
    // Boxed, as the ending below: the start's futures (the sandbox's
    // spawn, the first session lines) would otherwise be part of this
    // future's size for the worker's whole life, a few KiB of each of
    // thousands of live runs (BENCHMARKS.md, `scale.live_5000`).
    let (ours, child, sandbox_status) = match Box::pin(start_worker(ctx, &spec)).await {
        Ok(started) => started,
        Err(failed) => return *failed,
    };
    let watched = watch_worker(ctx, ours, spec, child, cancel).await;
    tracing::debug!(
        run_id = %ctx.run_id,
        termination = ?watched.exit.termination,
        "worker exited and its tree is gone"
    );
    Box::pin(record_exit(ctx, &watched)).await;
    ChildRun {
        outcome: watched.outcome,
        record: watched.record,
        cause: watched.cause,
        exit: Some(watched.exit),
        sandbox: Some(sandbox_status),
        setup_error: None,
        nested_usage: watched.nested_usage,
    }
}

/// Starts the worker and writes the session's first lines: its socket, the
/// running child and the protections in force, or the failed run.
async fn start_worker(
    ctx: &mut RunContext<'_>,
    spec: &TaskSpec,
) -> Result<(StdUnixStream, SandboxedChild, SandboxStatus), Box<ChildRun>> {
    let (ours, theirs) = match StdUnixStream::pair() {
        Ok(pair) => pair,
        Err(e) => {
            return Err(Box::new(ChildRun::setup_failed(format!(
                "cannot create the worker socket: {e}"
            ))));
        }
    };
    // Opened again now, and refused if it is no longer the admitted
    // directory: the worker starts in it by this descriptor.
    let workspace = match ctx.workspace.as_ref().map(AdmittedWorkspace::open) {
        Some(Ok(fd)) => Some(fd),
        Some(Err(why)) => {
            tracing::warn!(run_id = %ctx.run_id, "worker not started: {why}");
            let header = session_header(ctx, spec);
            ctx.journal.write(SessionEntry::Session(header)).await;
            ctx.journal
                .lifecycle_line(LifecycleEvent::Start, None)
                .await;
            return Err(Box::new(ChildRun::setup_failed(why)));
        }
        None => None,
    };
    let (layer, layer_target, nested) = match layered::plan(ctx.request, spec, workspace.as_ref()) {
        Ok(Some(planned)) => (Some(planned.layer), planned.target, planned.nested),
        Ok(None) => (None, None, false),
        Err(why) => return Err(Box::new(ChildRun::setup_failed(why))),
    };
    let mut sandbox_spec =
        spec::sandbox_spec(ctx.config, ctx.request, OwnedFd::from(theirs), workspace);
    sandbox_spec.layer = layer;
    let layer_started = crate::layer::change_clock_now();
    let mut child = match subagent_sandbox::spawn(sandbox_spec).await {
        Ok(child) => child,
        Err(e @ subagent_sandbox::SpawnError::Layer { .. }) => {
            tracing::warn!(run_id = %ctx.run_id, error = %e, "worker not started");
            ctx.journal
                .write(SessionEntry::Session(session_header(ctx, spec)))
                .await;
            ctx.journal
                .lifecycle_line(LifecycleEvent::Start, None)
                .await;
            return Err(Box::new(ChildRun {
                setup_error: Some((ErrorCode::SubagentSandboxUnavailable, layered::refusal(&e))),
                ..ChildRun::default()
            }));
        }
        Err(e) => {
            tracing::warn!(run_id = %ctx.run_id, error = %e, "worker not started");
            let header = SessionHeader {
                sandbox: assemble::refused_status(&e).unwrap_or_default(),
                ..session_header(ctx, spec)
            };
            ctx.journal.write(SessionEntry::Session(header)).await;
            ctx.journal
                .lifecycle_line(LifecycleEvent::Start, None)
                .await;
            return Err(Box::new(ChildRun::spawn_failed(&e)));
        }
    };
    ctx.journal.set_pid(child.pid());
    ctx.live.worker_started(child.pid());
    if let Some(target) = layer_target {
        // The sandbox hands a layer back or refuses the spawn; a child
        // without one must not run as if it had it.
        let layer = child.take_layer().ok_or_else(|| {
            Box::new(ChildRun::setup_failed(
                "the worker started without its workspace layer".to_owned(),
            ))
        })?;
        ctx.layer = Some(LiveLayer::new(layer, target, layer_started, nested));
    }
    tracing::debug!(
        run_id = %ctx.run_id,
        pid = child.pid(),
        agent = %ctx.request.agent,
        "worker spawned"
    );
    ctx.progress(|| ProgressEvent::Started {
        run_id: ctx.run_id.clone(),
        agent: ctx.request.agent.clone(),
        model: ctx.request.provider.model.clone(),
    });
    let mut sandbox_status = child.status().clone();
    crate::run::child::file_tools::forecast(&spec.tools, &mut sandbox_status);
    ctx.journal
        .write(SessionEntry::Session(SessionHeader {
            sandbox: sandbox_status.clone(),
            ..session_header(ctx, spec)
        }))
        .await;
    ctx.journal
        .lifecycle_line(LifecycleEvent::Start, None)
        .await;
    for missing in &sandbox_status.not_applied {
        ctx.journal
            .log(
                LogLevel::Warn,
                format!(
                    "protection not applied: {} ({})",
                    missing.protection, missing.reason
                ),
            )
            .await;
    }
    if !spec.system_prompt.is_empty() {
        ctx.journal
            .write(message(
                Role::System,
                ctx.sanitizer.mask_secrets(&spec.system_prompt),
            ))
            .await;
    }
    // An interrupted run continued as it stood has no new task.
    if !spec.task.is_empty() || spec.history.is_empty() {
        ctx.journal
            .write(message(Role::User, ctx.sanitizer.mask_secrets(&spec.task)))
            .await;
    }

    Ok((ours, child, sandbox_status))
}

/// The record of a run cancelled while it waited for a slot: the header
/// (no protection was applied: nothing ran), its start, the cancel as a
/// `limit` line, and an ending as a cancelled run's, without a worker.
async fn cancelled_in_queue(ctx: &RunContext<'_>, spec: &TaskSpec, limit: usize) -> ChildRun {
    let why = format!(
        "cancelled while queued for a concurrency slot (every one of max_concurrent = {limit} was taken); no worker was started"
    );
    ctx.journal
        .write(SessionEntry::Session(session_header(ctx, spec)))
        .await;
    ctx.journal
        .lifecycle_line(LifecycleEvent::Start, None)
        .await;
    ctx.journal
        .limit(LimitKind::Cancel, 0, LimitAction::Cancel, Some(why.clone()))
        .await;
    ChildRun {
        cause: Some(StopCause::Cancelled),
        setup_error: Some((ErrorCode::SubagentCancelled, why)),
        ..ChildRun::default()
    }
}

/// The session header; its sandbox field is filled in once the spawn says
/// what was applied. Built after the spawn call, so its cost (the tool
/// sandbox forecast plans Landlock and seccomp) overlaps the worker's
/// start instead of delaying it.
fn session_header(ctx: &RunContext<'_>, spec: &TaskSpec) -> SessionHeader {
    SessionHeader {
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
        tool_sandbox: spec::tool_sandbox_status(spec),
        parent_session: ctx
            .request
            .parent_session
            .as_ref()
            .map(|p| p.display().to_string()),
        resumed_from: ctx.request.resume.as_ref().map(|r| ResumedFrom {
            run_id: r.run_id.clone(),
            file: r.file.display().to_string(),
            turns: r.turns,
        }),
        batch_task: ctx.request.batch_task.clone(),
        tools: Some(spec.tools.clone()),
        output_schema: spec
            .output_schema_json
            .as_deref()
            .and_then(|schema| serde_json::from_str(schema).ok()),
        output_mode: spec.output_schema_json.as_ref().map(|_| spec.output_mode),
        max_turns: Some(spec.budget.max_turns),
        max_cost: spec.budget.max_cost,
        python: match &spec.python {
            Some(PythonInterpreter::Found { executable, .. }) => Some(executable.clone()),
            // A pending interpreter is recorded in a log line once known.
            Some(PythonInterpreter::Missing { .. } | PythonInterpreter::Pending) | None => None,
        },
    }
}

fn message(role: Role, text: String) -> SessionEntry {
    SessionEntry::Message(MessageLine {
        role,
        turn: 0,
        text,
        stop_reason: None,
        response_id: None,
    })
}

/// Session lines about how the process ended: limit hits and output excerpts.
async fn record_exit(ctx: &RunContext<'_>, watch: &Watched) {
    let exit = &watch.exit;
    use subagent_protocol::session::{OutputLine, Stream};
    if let Some(hit) =
        crate::run::record::stop::termination_limit_hit(&exit.termination, &ctx.request.limits)
    {
        ctx.journal.limit_hit(hit).await;
    }
    for (stream, captured) in [
        (Stream::Stdout, &exit.stdout),
        (Stream::Stderr, &exit.stderr),
    ] {
        if captured.bytes_seen > 0 {
            ctx.journal
                .write(SessionEntry::Output(OutputLine {
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
        ctx.journal
            .log(
                LogLevel::Info,
                format!(
                    "partial assistant text before the worker ended: {}",
                    ctx.sanitizer.mask_secrets(&watch.record.partial_text)
                ),
            )
            .await;
    }
}

/// Attempts at a fresh run id when a session file of the same name exists:
/// ids are UUIDv7s, so a second attempt means a planted file or a clock
/// gone wrong rather than chance; the retry stays for those.
const RUN_ID_ATTEMPTS: usize = 8;

/// A run id whose session file did not exist yet, its paths, and the
/// created writer (or why the file could not be created).
fn create_session_file(
    config: &SupervisorConfig,
    agent: &str,
    started_wall: SystemTime,
    mut next_id: impl FnMut() -> String,
) -> (
    String,
    SessionPaths,
    Result<SessionWriter, SessionWriterError>,
) {
    let mut attempt = 1;
    loop {
        let run_id = next_id();
        let paths = SessionPaths::new(&config.sessions_dir, &run_id, agent, started_wall);
        match SessionWriter::create(&paths.session_file) {
            Err(e) if e.already_exists() && attempt < RUN_ID_ATTEMPTS => attempt += 1,
            created => return (run_id, paths, created),
        }
    }
}

#[cfg(test)]
#[path = "life_tests.rs"]
mod tests;
