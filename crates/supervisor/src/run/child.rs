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
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use subagent_protocol::frame::encode_frame;
use subagent_protocol::message::LogLevel;
use subagent_protocol::result::SubagentResult;
use subagent_protocol::session::{
    LifecycleEvent, LimitAction, LimitKind, MessageLine, ResumedFrom, Role, SESSION_FORMAT_VERSION,
    SandboxStatus, SessionEntry, SessionHeader,
};
use subagent_protocol::{
    ErrorCode, FrameError, MaxPayload, PythonInterpreter, TaskSpec, ToWorker, tool_names,
};
use subagent_sandbox::{Isolation, SandboxPolicy, SandboxSpec};
use tokio_util::sync::CancellationToken;

use super::assemble::{self, ChildRun};
use super::config::{CAPTURE_KEEP, SupervisorConfig, tools_for_depth};
use super::context::{RunContext, mark_session_lost};
use super::nested::SpawnTree;
use super::progress::ProgressEvent;
use super::request::{RunRequest, new_run_id};
use super::supervisor::Supervisor;
use super::watch::{Watched, watch_worker};
use crate::agents::AgentDefinition;
use crate::sanitize::Sanitizer;
use crate::session::{SessionPaths, SessionWriter, SessionWriterError};

/// Runs one admitted request to its result; `tree` is the spawn tree its
/// nested subagents count against.
pub(super) async fn run_child(
    supervisor: &Supervisor,
    request: RunRequest,
    agent: AgentDefinition,
    cancel: CancellationToken,
    tree: Arc<SpawnTree>,
) -> SubagentResult {
    let config = &supervisor.config;
    let started_wall = SystemTime::now();
    let started_at = subagent_protocol::time::rfc3339_ms(started_wall);
    let started = Instant::now();
    let api_key = request
        .provider
        .api_key
        .as_ref()
        .map(|k| k.expose().to_owned());
    let sanitizer = Sanitizer::new(api_key, std::env::var("HOME").ok());
    let mut probe_spec = task_spec(&request, &agent, &new_run_id(), config.sandbox_policy);
    probe_spec.python = super::python::for_tools(&probe_spec.tools).await;
    if let Err(message) = check_spec_fits(&probe_spec) {
        return SubagentResult::refusal(ErrorCode::InvalidInput, message);
    }
    let (run_id, paths, created) =
        create_session_file(config, &request.agent, started_wall, new_run_id);
    let spec = TaskSpec {
        run_id: run_id.clone(),
        ..probe_spec
    };

    let mut ctx = RunContext {
        config,
        supervisor,
        tree,
        request: &request,
        run_id: run_id.clone(),
        started_at,
        started,
        sanitizer,
        paths,
        writer: None,
        session_created: false,
        pid: None,
        closing: None,
    };

    let writer = match created {
        Ok(w) => w,
        Err(e) => {
            let mut result = assemble::setup_failure(
                &ctx.assembly(),
                format!("cannot create the session file: {e}"),
            );
            mark_session_lost(&mut result, &e);
            return result;
        }
    };
    ctx.writer = Some(writer);
    ctx.session_created = true;
    tracing::debug!(
        run_id = %run_id,
        file = %ctx.paths.session_file.display(),
        "session file created"
    );

    let run = spawn_and_watch(&mut ctx, spec, cancel).await;
    let mut result = assemble::assemble_blocking(ctx.assembly(), run).await;
    if let Some(resume) = &request.resume {
        for single in &mut result.details.results {
            single.continued_from = Some(resume.turns);
        }
    }
    if let Err(e) = ctx.finish(&result).await {
        mark_session_lost(&mut result, &e);
    }
    ctx.progress(|| ProgressEvent::Ended {
        run_id,
        status: result
            .details
            .error
            .as_ref()
            .map_or_else(|| "ok".to_owned(), |e| e.code.to_string()),
    });
    result
}

/// Spawns the worker, drives it, and waits for the tree to be gone.
pub(super) async fn spawn_and_watch(
    ctx: &mut RunContext<'_>,
    spec: TaskSpec,
    cancel: CancellationToken,
) -> ChildRun {
    let (ours, theirs) = match StdUnixStream::pair() {
        Ok(pair) => pair,
        Err(e) => return ChildRun::setup_failed(format!("cannot create the worker socket: {e}")),
    };
    let sandbox_spec = sandbox_spec(ctx, OwnedFd::from(theirs));
    let child = match subagent_sandbox::spawn(sandbox_spec).await {
        Ok(child) => child,
        Err(e) => {
            tracing::warn!(run_id = %ctx.run_id, error = %e, "worker not started");
            let header = SessionHeader {
                sandbox: assemble::refused_status(&e).unwrap_or_default(),
                ..session_header(ctx, &spec)
            };
            ctx.write(SessionEntry::Session(header)).await;
            ctx.lifecycle_line(LifecycleEvent::Start, None).await;
            return ChildRun::spawn_failed(&e);
        }
    };
    ctx.pid = Some(child.pid());
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
    super::file_tools::forecast(&spec.tools, &mut sandbox_status);
    ctx.write(SessionEntry::Session(SessionHeader {
        sandbox: sandbox_status.clone(),
        ..session_header(ctx, &spec)
    }))
    .await;
    ctx.lifecycle_line(LifecycleEvent::Start, None).await;
    for missing in &sandbox_status.not_applied {
        ctx.log(
            LogLevel::Warn,
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
    // An interrupted run continued as it stood has no new task.
    if !spec.task.is_empty() || spec.history.is_empty() {
        ctx.write(message(Role::User, ctx.sanitizer.mask_secrets(&spec.task)))
            .await;
    }

    let watched = watch_worker(ctx, ours, spec, child, cancel).await;
    tracing::debug!(
        run_id = %ctx.run_id,
        termination = ?watched.exit.termination,
        "worker exited and its tree is gone"
    );
    record_exit(ctx, &watched).await;
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
        tool_sandbox: tool_sandbox_status(spec),
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
            Some(PythonInterpreter::Missing { .. }) | None => None,
        },
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
        // The worker talks to the model over the network and holds the API
        // key; the tool sandbox is for the processes it starts for tools.
        isolation: None,
    }
}

/// Session lines about how the process ended: limit hits and output excerpts.
async fn record_exit(ctx: &RunContext<'_>, watch: &Watched) {
    let exit = &watch.exit;
    use subagent_protocol::session::{OutputLine, Stream};
    use subagent_sandbox::Termination;
    let limits = &ctx.request.limits;
    match &exit.termination {
        Termination::OutputLimit { stream } => {
            let (name, value) = match stream {
                Stream::Stdout => (LimitKind::Stdout, limits.stdout_bytes),
                Stream::Stderr => (LimitKind::Stderr, limits.stderr_bytes),
            };
            ctx.limit(
                name,
                value,
                LimitAction::Sigkill,
                Some("output hard limit reached; process group killed".into()),
            )
            .await;
        }
        Termination::MemoryLimit => {
            ctx.limit(
                LimitKind::Memory,
                limits.memory_bytes,
                LimitAction::OomKill,
                None,
            )
            .await
        }
        Termination::PidsLimit => {
            ctx.limit(LimitKind::Pids, limits.pids, LimitAction::RefusedFork, None)
                .await
        }
        Termination::Leaked { pids } => {
            ctx.limit(
                LimitKind::LeakedProcesses,
                pids.len() as u64,
                LimitAction::Sigkill,
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
/// ids are 8 hex characters, so among the thousands of runs of one day in
/// one sessions dir a collision is rare but real.
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

/// Refuses a task whose `Start` frame would not fit the protocol's frame
/// cap, before anything is created: the worker could never receive it.
fn check_spec_fits(spec: &TaskSpec) -> Result<(), String> {
    let max = MaxPayload::default().bytes();
    match encode_frame(
        &ToWorker::Start(Box::new(spec.clone())),
        MaxPayload::default(),
    ) {
        Ok(_) => Ok(()),
        Err(FrameError::TooLarge { announced, .. }) => Err(format!(
            "the task is too large to send to a worker: {announced} bytes encoded, the limit is {max} \
             bytes; shorten the task, the system prompt or the output schema, or put large input \
             in a file in the workspace and name it in the task"
        )),
        Err(e) => Err(format!("the task cannot be encoded for the worker: {e}")),
    }
}

/// The layers tool processes of this child will get, for the session
/// header: the isolation layers and the memory and pids caps (each cgroup
/// cap that cannot be had listed as not applied, and the rlimit memory
/// fallback); `None` when it has no process tool.
fn tool_sandbox_status(spec: &TaskSpec) -> Option<SandboxStatus> {
    if !spec.tools.iter().any(|t| t == tool_names::PYTHON_EXECUTE) {
        return None;
    }
    let mut isolation = Isolation::strict(vec![PathBuf::from(&spec.workspace_dir)]);
    isolation.network = spec.allow_network;
    let mut status = subagent_sandbox::isolation_status(&isolation);
    let caps = subagent_sandbox::resource_status(&subagent_sandbox::ResourceLimits {
        memory_bytes: Some(spec.limits.tool_memory_bytes),
        pids: Some(spec.limits.tool_pids),
        ..Default::default()
    });
    status.applied.extend(caps.applied);
    status.not_applied.extend(caps.not_applied);
    Some(status)
}

fn task_spec(
    request: &RunRequest,
    agent: &AgentDefinition,
    run_id: &str,
    policy: SandboxPolicy,
) -> TaskSpec {
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
        budget: request.effective_budget(),
        limits: request.limits.clone(),
        workspace_dir: request.workspace_dir.display().to_string(),
        allow_network: request.allow_network,
        require_sandbox: policy == SandboxPolicy::RequireAll,
        depth: child_depth,
        max_depth: request.max_depth,
        web: request.web.clone(),
        python: None,
        protected_paths: crate::config::protected_config_dirs(&request.workspace_dir)
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        history: request
            .resume
            .as_ref()
            .map(|r| r.history.clone())
            .unwrap_or_default(),
    }
}

#[cfg(test)]
#[path = "child_tests.rs"]
mod tests;
