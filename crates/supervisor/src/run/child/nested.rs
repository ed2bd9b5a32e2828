//! Nested subagents, the supervisor's side: a worker's `SpawnSubagent`
//! turned into a grandchild run and the grandchild's result turned into the
//! worker's `SubagentResult`.
//!
//! The watch of the parent admits the spawn (depth, budget reservation:
//! [`crate::run::admit::admission::admit_spawn`]), builds the request with the helpers
//! here and then drives the future [`start`] returns beside its own loop,
//! never detached: a grandchild cannot outlive its parent's watch. The
//! grandchild itself goes back up through [`NestedRunner`] to the
//! supervisor's normal run path: admission, its own session file, sandbox
//! and limits. Nothing here writes a session file or starts a process.
//!
//! A child never gets more than its parent ([`hold_under_parent`]): its
//! limits, budget, depth, network and provider are the parent's (or lower
//! when the call asks for lower), and its tools are its agent's cut down
//! to the parent's, or the ones the call names when the parent has them
//! all. A call that asks for more is refused (`INVALID_INPUT`).

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

use subagent_protocol::RunMode;
use subagent_protocol::result::{ContentItem, SubagentResult};
use subagent_protocol::{Budget, ErrorCode, SpawnRequest, SubagentReply, Usage};
use tokio_util::sync::CancellationToken;

use crate::agents::AgentCatalog;
use crate::config::{LimitSet, RaiseSettings};
use crate::request::RunRequest;
use crate::request::{Asked, Ceilings, Owner};
use crate::run::admit::admission::SpawnTree;
use crate::run::admit::reservation::ReservationId;

/// The way back up to the supervisor for a nested run: the run's context
/// holds this rather than the supervisor itself, so that nothing below the
/// supervisor depends on it.
pub(in crate::run) trait NestedRunner: Send + Sync {
    /// Admits and runs `request` as a nested run of `tree`, to its result.
    fn run_nested(
        &self,
        request: RunRequest,
        cancel: CancellationToken,
        tree: Arc<SpawnTree>,
    ) -> Pin<Box<dyn Future<Output = SubagentResult> + Send + '_>>;
}

/// A grandchild run in flight, driven by its parent's watch.
pub(in crate::run) type NestedRun<'a> = Pin<Box<dyn Future<Output = NestedDone> + Send + 'a>>;

/// How a grandchild ended, for its parent's watch.
#[derive(Debug)]
pub(in crate::run) struct NestedDone {
    pub reservation: ReservationId,
    pub reply: SubagentReply,
}

/// A refusal answered before anything starts.
pub(in crate::run) fn refused(call_id: String, code: ErrorCode, message: String) -> SubagentReply {
    SubagentReply {
        call_id,
        is_error: true,
        output: format!("{code}: {message}"),
        usage: Usage::default(),
        error_code: Some(code),
    }
}

/// The grandchild's request: its own agent, task and schema; its parent's
/// provider, workspace, limits and web settings; the reserved budget; one
/// level deeper; lifecycle lines into the parent's session file.
pub(in crate::run) fn grandchild_request(
    parent: &RunRequest,
    parent_session: &Path,
    spawn: &SpawnRequest,
    budget: Budget,
) -> RunRequest {
    let p = parent;
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
        parent_session: Some(parent_session.to_owned()),
        mode: RunMode::Single,
        web: p.web.clone(),
        resume: None,
        batch_task: None,
        isolation: p.isolation,
        apply: p.apply,
        // Filled in by the parent's watch, which holds the parent's layer.
        parent_view: None,
        // Filled in by the parent's watch, which holds the call's span.
        trace_parent: None,
    }
}

/// Holds `request` (made by [`grandchild_request`], so the parent's own
/// settings with the reserved budget) under those settings, with what the
/// call asks applied: lower limits, a tool subset. The error is the
/// refusal's text, naming what was asked and what the parent has.
pub(in crate::run) fn hold_under_parent(
    parent: &RunRequest,
    catalog: &AgentCatalog,
    spawn: &SpawnRequest,
    request: &mut RunRequest,
) -> Result<(), String> {
    let tools_of = |agent: &str| {
        catalog
            .get(agent)
            .map(|a| a.tools.clone())
            .unwrap_or_default()
    };
    let parent_tools = parent
        .tools
        .clone()
        .unwrap_or_else(|| tools_of(&parent.agent));
    let ceilings = Ceilings::new(
        request.clone(),
        parent_tools,
        RaiseSettings::default(),
        Owner::Parent,
    );
    let asked_limits = match &spawn.limits_json {
        None => LimitSet::default(),
        Some(text) => {
            let map = match serde_json::from_str::<serde_json::Value>(text) {
                Ok(serde_json::Value::Object(map)) => map,
                _ => return Err("`limits` must be an object such as {\"memory\": \"256M\"}".into()),
            };
            LimitSet::from_json(map)?
        }
    };
    asked_limits.apply(
        &mut request.limits,
        &mut request.budget,
        &mut request.max_depth,
    );
    request.tools.clone_from(&spawn.tools);
    let agent_tools = tools_of(&spawn.agent);
    ceilings
        .admit(
            request,
            &Asked {
                limits: &asked_limits,
                tools: spawn.tools.is_some(),
                agent_tools: &agent_tools,
            },
        )
        .map_err(|e| e.to_string())
}

/// Runs the grandchild to its result; the future is the parent watch's to
/// drive and to drop.
pub(in crate::run) fn start<'a>(
    runner: &'a dyn NestedRunner,
    tree: Arc<SpawnTree>,
    request: RunRequest,
    call_id: String,
    reservation: ReservationId,
    cancel: CancellationToken,
) -> NestedRun<'a> {
    Box::pin(async move {
        let result = runner.run_nested(request, cancel, tree).await;
        NestedDone {
            reservation,
            reply: reply_of(call_id, &result),
        }
    })
}

/// The worker's answer from the grandchild's result object: its text or
/// structured output, or its error with any partial output after it.
pub(in crate::run) fn reply_of(call_id: String, result: &SubagentResult) -> SubagentReply {
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
