//! Nested subagents, the supervisor's side: a worker's `SpawnSubagent`
//! turned into a grandchild run and the grandchild's result turned into the
//! worker's `SubagentResult`.
//!
//! The watch of the parent decides (depth, budget reservation) with the
//! pure helpers here and then drives the future [`start`] returns beside
//! its own loop, never detached: a grandchild cannot outlive its parent's
//! watch. The grandchild itself goes through the supervisor's normal run
//! path ([`Supervisor::run_nested`]): admission, its own session file,
//! sandbox and limits. Nothing here writes a session file or starts a
//! process.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use subagent_protocol::result::{ContentItem, Mode, SubagentResult};
use subagent_protocol::{Budget, ErrorCode, SpawnRequest, SubagentReply, Usage};
use tokio_util::sync::CancellationToken;

use super::context::RunContext;
use super::request::RunRequest;
use super::reservation::{ReservationId, Unaffordable};
use super::supervisor::Supervisor;

/// What one root run's tree has started so far (at most
/// [`super::config::SupervisorConfig::max_tree_spawns`]); shared by every
/// run in it.
#[derive(Debug)]
pub(super) struct SpawnTree {
    spawned: AtomicU32,
    cap: u32,
}

impl SpawnTree {
    pub(super) fn new(cap: u32) -> Arc<Self> {
        Arc::new(Self {
            spawned: AtomicU32::new(0),
            cap,
        })
    }

    /// Counts one more nested spawn; `Err(cap)` when the cap is reached.
    pub(super) fn take_one(&self) -> Result<(), u32> {
        let prior = self.spawned.fetch_add(1, Ordering::SeqCst);
        if prior >= self.cap {
            self.spawned.fetch_sub(1, Ordering::SeqCst);
            return Err(self.cap);
        }
        Ok(())
    }
}

/// A grandchild run in flight, driven by its parent's watch.
pub(super) type NestedRun<'a> = Pin<Box<dyn Future<Output = NestedDone> + Send + 'a>>;

/// How a grandchild ended, for its parent's watch.
#[derive(Debug)]
pub(super) struct NestedDone {
    pub reservation: ReservationId,
    pub reply: SubagentReply,
}

/// A refusal answered before anything starts.
pub(super) fn refused(call_id: String, code: ErrorCode, message: String) -> SubagentReply {
    SubagentReply {
        call_id,
        is_error: true,
        output: format!("{code}: {message}"),
        usage: Usage::default(),
        error_code: Some(code),
    }
}

/// The depth check, made by the supervisor whatever the worker was
/// offered: a worker at the depth limit has no `subagent` tool, but a
/// buggy or hostile one can still send the request.
pub(super) fn check_depth(parent: &RunRequest) -> Result<(), String> {
    let parent_depth = parent.caller_depth.saturating_add(1);
    let depth = parent_depth.saturating_add(1);
    if depth > parent.max_depth {
        return Err(format!(
            "subagent depth limit reached: a subagent would run at depth {depth}, the limit \
             is {}; do the work directly instead of delegating",
            parent.max_depth
        ));
    }
    Ok(())
}

/// The refusal of a spawn the parent cannot afford.
pub(super) fn unaffordable(call_id: String, why: Unaffordable) -> SubagentReply {
    refused(
        call_id,
        ErrorCode::SubagentSpawnDenied,
        format!("spawn refused before it started: {why}"),
    )
}

/// The grandchild's request: its own agent, task and schema; its parent's
/// provider, workspace, limits and web settings; the reserved budget; one
/// level deeper; lifecycle lines into the parent's session file.
pub(super) fn grandchild_request(
    parent: &RunContext<'_>,
    spawn: &SpawnRequest,
    budget: Budget,
) -> RunRequest {
    let p = parent.request;
    RunRequest {
        agent: spawn.agent.clone(),
        task: spawn.task.clone(),
        system_prompt: None,
        tools: None,
        provider: p.provider.clone(),
        output_schema_json: spawn.output_schema_json.clone(),
        output_mode: p.output_mode,
        budget,
        parent_remaining: None,
        limits: p.limits.clone(),
        workspace_dir: p.workspace_dir.clone(),
        allow_network: p.allow_network,
        caller_depth: p.caller_depth.saturating_add(1),
        max_depth: p.max_depth,
        parent_session: Some(parent.paths.session_file.clone()),
        mode: Mode::Single,
        web: p.web.clone(),
    }
}

/// Runs the grandchild to its result; the future is the parent watch's to
/// drive and to drop.
pub(super) fn start<'a>(
    supervisor: &'a Supervisor,
    tree: Arc<SpawnTree>,
    request: RunRequest,
    call_id: String,
    reservation: ReservationId,
    cancel: CancellationToken,
) -> NestedRun<'a> {
    Box::pin(async move {
        let result = supervisor.run_nested(request, cancel, tree).await;
        NestedDone {
            reservation,
            reply: reply_of(call_id, &result),
        }
    })
}

/// The worker's answer from the grandchild's result object: its text or
/// structured output, or its error with any partial output after it.
pub(super) fn reply_of(call_id: String, result: &SubagentResult) -> SubagentReply {
    let single = result.details.results.first();
    let usage = single.map(|s| s.usage).unwrap_or_default();
    let text = result
        .content
        .iter()
        .map(|ContentItem::Text { text }| text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    match &result.details.error {
        Some(error) => {
            let mut output = format!("{}: {}", error.code, error.message);
            if !text.is_empty() && text != error.message {
                output.push_str("\n\nIts output:\n");
                output.push_str(&text);
            }
            SubagentReply {
                call_id,
                is_error: true,
                output,
                usage,
                error_code: Some(error.code),
            }
        }
        None => SubagentReply {
            call_id,
            is_error: false,
            output: single
                .and_then(|s| s.structured_output.as_ref())
                .map_or(text, |value| value.to_string()),
            usage,
            error_code: None,
        },
    }
}

#[cfg(test)]
#[path = "nested_tests.rs"]
mod tests;
