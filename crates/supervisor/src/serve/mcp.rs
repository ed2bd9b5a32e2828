//! `subagent serve --mcp`: an MCP server over stdio (the official Rust SDK,
//! `rmcp`) whose tools start subagent runs: `subagent` (single, parallel or
//! chain, an optional output schema returned as `structuredContent`, or in
//! the background with a job id), `subagent_status` and `subagent_cancel`.
//!
//! In: MCP requests on stdin. Out: MCP responses and notifications on
//! stdout, nothing else: logs go to stderr. The server's defaults
//! ([`ServeDefaults`]: its flags) are the defaults of every run and its ceilings; a call
//! may lower limits, tools, network and workspace, and choose an agent,
//! but never ask above the server's own (docs/mcp.md). While a call runs, its progress goes to the
//! caller as `notifications/progress` (when it sent a progress token); a
//! `notifications/cancelled` for it cancels the run, and so do SIGINT,
//! SIGTERM and the client closing stdin, each waiting until every child is
//! gone before the server exits.
//!
//! The transport is rmcp's stdio one behind [`transport::BoundedTransport`]:
//! a client that does not read its answers stops the reading of its
//! requests instead of growing the server.
//!
//! All runs share one [`crate::Supervisor`] (the one of the jobs registry,
//! [`Jobs`], which runs the background jobs), so its concurrency limit
//! holds over every call: a run over it waits for a slot (its progress
//! says `queued`). When the server stops, background jobs are
//! cancelled too: nobody would be left to ask for their results (their
//! session files keep them). It never prints a run's output anywhere but
//! the response.

mod progress;
mod progress_queue;
mod tools;
mod transport;

use std::pin::pin;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorCode as McpErrorCode, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use subagent_protocol::{ErrorCode, RunMode};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::defaults::{ServeDefaults, SpawnError, error_chain};
use super::spawn::Spawn;
use crate::RunRequest;
use crate::interrupt::wait_for_interrupt;
use crate::jobs::{JobId, JobRequest, JobState, Jobs, JobsError};
use crate::prepare::{PrepareError, Prepared};
use crate::run::{Ceilings, Owner, concurrency_for};

/// What every call shares.
struct State {
    defaults: Arc<ServeDefaults>,
    /// What the defaults allow; every call is held under it.
    ceilings: Arc<Ceilings>,
    /// Background jobs, and the supervisor every run goes through.
    jobs: Jobs,
    /// Cancelled when the server stops: every run is a child of it.
    shutdown: CancellationToken,
    /// Dropped with the last clone of the state: the server's exit waits
    /// for that, so no call (and no child) outlives it.
    _alive: mpsc::Sender<()>,
}

/// The MCP server: cheap to clone, one per connection.
#[derive(Clone)]
struct McpServer {
    state: Arc<State>,
}

/// Why the MCP server could not start or serve.
#[derive(Debug, thiserror::Error)]
pub enum McpServeError {
    /// The defaults alone do not make a run.
    #[error("serve --mcp: the server's flags must make a complete run by themselves")]
    Defaults(#[source] PrepareError),
    /// The jobs registry or the server's session file could not be set up.
    #[error("serve --mcp: cannot start the jobs registry")]
    Jobs(#[source] JobsError),
    /// A dead server's runs could not be marked interrupted.
    #[error("serve --mcp: cannot mark a dead server's runs interrupted")]
    Recover(#[source] JobsError),
    /// The client's MCP initialization failed.
    #[error("serve --mcp: the MCP handshake failed")]
    Handshake(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// An MCP server, prepared and not yet serving.
pub struct McpServe {
    defaults: ServeDefaults,
    prepared: Prepared,
}

impl McpServe {
    /// Prepares the server's own run settings (refused when they are not
    /// a complete run). Nothing starts yet.
    pub fn new(defaults: ServeDefaults) -> Result<Self, McpServeError> {
        let prepared = defaults
            .prepare(&defaults.overrides)
            .map_err(McpServeError::Defaults)?;
        Ok(Self { defaults, prepared })
    }

    /// Serves MCP on stdin and stdout until the client closes stdin or a
    /// signal arrives; returns once every run has ended. Call it inside a
    /// multi-threaded runtime, and shut that down without waiting for its
    /// tasks afterwards: a pending read of stdin cannot be cancelled.
    pub async fn run(self) -> Result<(), McpServeError> {
        let Self { defaults, prepared } = self;
        let ceilings = prepared.ceilings(Owner::Server);
        tracing::info!(ceilings = ?ceilings.describe(), "every call is held under these ceilings");
        let mut config = prepared.config;
        config.progress = Some(progress::routing_sink());
        let (alive, mut all_gone) = mpsc::channel::<()>(1);
        let shutdown = CancellationToken::new();
        // Like serve --stdio: the server's own file takes every job's
        // lifecycle lines, and a dead server's unfinished runs (either
        // kind's) are marked interrupted.
        let serve_dir = config.sessions_dir.join("serve");
        let parent = serve_dir.join(format!("mcp-{}.jsonl", std::process::id()));
        let (jobs, recovered) =
            Jobs::open(config, parent, serve_dir)
                .await
                .map_err(|e| match e {
                    JobsError::Recover { .. } => McpServeError::Recover(e),
                    e => McpServeError::Jobs(e),
                })?;
        for run in recovered {
            tracing::info!(job = %run.start.job_id, file = %run.parent_file.display(), "marked a run of a dead server interrupted");
        }
        let server = McpServer {
            state: Arc::new(State {
                defaults: Arc::new(defaults),
                ceilings: Arc::new(ceilings),
                jobs: jobs.clone(),
                shutdown: shutdown.clone(),
                _alive: alive,
            }),
        };
        let service = server
            .serve(transport::stdio())
            .await
            .map_err(|e| McpServeError::Handshake(Box::new(e)))?;
        let quit = tokio::select! {
            quit = service.waiting() => format!("{quit:?}"),
            interrupted = wait_for_interrupt() => {
                if interrupted { "signal".to_owned() } else { "no signals".to_owned() }
            }
        };
        tracing::info!(reason = %quit, "MCP server stopping");
        shutdown.cancel();
        jobs.cancel_all();
        for job in jobs.list() {
            jobs.wait(&job.job_id).await;
        }
        // Resolves once every call has returned its state, i.e. its run ended.
        let _ = all_gone.recv().await;
        Ok(())
    }
}

impl McpServer {
    async fn spawn(
        &self,
        arguments: Option<rmcp::model::JsonObject>,
        context: RequestContext<RoleServer>,
    ) -> rmcp::model::CallToolResult {
        let call = match tools::parse_spawn(arguments) {
            Ok(mut call) => {
                call.trace_parent = super::spawn::trace_parent_of(
                    context.meta.get("traceparent").cloned(),
                    context.meta.get("tracestate").cloned(),
                    "_meta.traceparent",
                );
                call
            }
            Err(message) => return tools::refusal(ErrorCode::InvalidInput, &message),
        };
        let requests = match self.requests(&call).await {
            Ok(requests) => requests,
            Err(e) => return tools::refusal(ErrorCode::InvalidInput, &error_chain(&e)),
        };
        // Foreground and background alike: one plan, one concurrency rule.
        let mut plan = call.plan(requests);
        if plan.mode == RunMode::Parallel {
            // An explicit concurrency above the limit is refused; the
            // default is lowered to it (the others wait for a slot).
            let max = self.state.jobs.supervisor().max_concurrent();
            match concurrency_for(call.concurrency, max) {
                Ok(n) => plan.concurrency = Some(n),
                Err(message) => return tools::refusal(ErrorCode::InvalidInput, &message),
            }
        }
        if call.background {
            let started = self.state.jobs.start(JobRequest {
                mode: plan.mode,
                requests: plan.requests,
                concurrency: plan.concurrency,
                background: true,
            });
            return match started {
                Ok(job_id) => {
                    let jobs = &self.state.jobs;
                    let state = jobs.status(&job_id).map_or(JobState::Running, |s| s.state);
                    tools::job_started(&job_id.0, state)
                }
                Err(e) => tools::refusal(ErrorCode::InvalidInput, &e.to_string()),
            };
        }
        let cancel = self.state.shutdown.child_token();
        let execute = self.state.jobs.supervisor().execute(plan, cancel.clone());
        // Without a progress token nobody wants the progress: the run is
        // not scoped, and the sink drops its events.
        let (run, forwarder) = match context.meta.get_progress_token() {
            Some(token) => {
                let (tx, rx) = progress_queue::progress_queue();
                let forwarder = tokio::spawn(forward_progress(context.peer.clone(), token, rx));
                (
                    futures_util::future::Either::Left(progress::scoped(tx, execute)),
                    Some(forwarder),
                )
            }
            None => (futures_util::future::Either::Right(execute), None),
        };
        let mut run = pin!(run);
        let result = tokio::select! {
            result = &mut run => result,
            () = context.ct.cancelled() => {
                // The client gave up on this call: stop the run and wait for
                // its children to be gone before the handler returns.
                cancel.cancel();
                run.await
            }
        };
        if let Some(forwarder) = forwarder {
            // Every progress notification goes out before the response.
            let _ = forwarder.await;
        }
        tools::call_result(&result, call.output_schema_json.is_some())
    }

    /// `subagent_status`, or with `cancel` `subagent_cancel`, which
    /// answers once the job has ended and its processes are gone.
    async fn job(&self, cancel: bool, job_id: JobId) -> rmcp::model::CallToolResult {
        let jobs = &self.state.jobs;
        if cancel && jobs.cancel(&job_id) {
            jobs.wait(&job_id).await;
        }
        match jobs.status(&job_id) {
            Some(status) => tools::job_status(&status),
            None => tools::refusal(ErrorCode::InvalidInput, &format!("no job {job_id}")),
        }
    }

    /// One resolved request per task: the server's flags patched by the
    /// call (prepared off the runtime's threads: it reads files).
    async fn requests(&self, call: &Spawn) -> Result<Vec<RunRequest>, SpawnError> {
        Arc::clone(&self.state.defaults)
            .requests_off_runtime(
                Arc::clone(&self.state.ceilings),
                call.patch(),
                call.tasks.clone(),
            )
            .await
            .map(|requests| call.traced(requests))
    }
}

/// Sends each progress message of a call as `notifications/progress` with
/// the caller's token, `progress` numbering the call's events (dropped ones
/// included, so it always grows). Messages dropped while the client did
/// not read are said in the next message sent and in the server's log.
async fn forward_progress(
    peer: Peer<RoleServer>,
    token: ProgressToken,
    rx: progress_queue::ProgressReceiver,
) {
    while let Some(delivered) = rx.next().await {
        let message = match delivered.dropped_before {
            0 => delivered.message,
            n => format!(
                "({n} earlier progress messages dropped: the client did not read them) {}",
                delivered.message
            ),
        };
        #[expect(
            clippy::cast_precision_loss,
            reason = "a sequence number; exact below 2^53 events"
        )]
        let note = ProgressNotificationParam::new(token.clone(), delivered.sequence as f64)
            .with_message(message);
        if let Err(e) = peer.notify_progress(note).await {
            // The client is gone; the run is cancelled by the connection's end.
            tracing::debug!(error = %e, "progress notification not sent");
            while rx.next().await.is_some() {}
            break;
        }
    }
    let dropped = rx.dropped();
    if dropped > 0 {
        tracing::warn!(
            dropped,
            kept = progress_queue::QUEUED_MESSAGES,
            "progress messages of a call were dropped: its client did not read them"
        );
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("subagent", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Runs LLM subagents as process-isolated, resource-capped workers. \
                 Call `subagent` with a task (or tasks and a mode); every run leaves a session file.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::tool_list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let result = match request.name.as_ref() {
            tools::SPAWN_TOOL => self.spawn(request.arguments, context).await,
            name @ (tools::STATUS_TOOL | tools::CANCEL_TOOL) => {
                match tools::parse_job_id(request.arguments) {
                    Ok(id) => self.job(name == tools::CANCEL_TOOL, JobId(id)).await,
                    Err(message) => tools::refusal(ErrorCode::InvalidInput, &message),
                }
            }
            other => {
                return Err(ErrorData::new(
                    McpErrorCode::METHOD_NOT_FOUND,
                    format!("unknown tool {other}"),
                    None,
                ));
            }
        };
        Ok(result.into())
    }
}
