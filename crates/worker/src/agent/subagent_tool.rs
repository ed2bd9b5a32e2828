//! The `subagent` tool: the model delegates a task to another agent. The
//! call becomes a spawn request to the supervisor (through
//! [`crate::subagent_calls`]); the supervisor admits, runs and reports the
//! grandchild, and its reply is the tool's result.
//!
//! Not a [`subagent_tools::Tool`]: it starts no process and has no
//! workspace, it talks to the supervisor, which only the worker can. It is
//! offered exactly when the task's tools name it, which the supervisor does
//! only below the depth limit. Every failure is an error result for the
//! model, never an end of the run.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use subagent_protocol::{ErrorCode, Limits, SpawnRequest, Usage};
use tokio_util::sync::CancellationToken;

use crate::provider::ToolDefinition;
use crate::subagent_calls::SubagentCalls;

/// The tool's name, as `--tools` and agent files spell it.
pub const SUBAGENT_TOOL_NAME: &str = subagent_protocol::tool_names::SUBAGENT;

/// Added to the grandchild's own wall timeout for the longest wait on a
/// reply (30 s): the supervisor answers after the grandchild's timeout, its
/// cancel window and its kill grace have run out, so past this slack it
/// will not answer at all and the model should hear so.
const REPLY_SLACK: Duration = Duration::from_secs(30);

/// What the call produced for the model and for the budget.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SubagentToolOutput {
    pub output: String,
    pub is_error: bool,
    /// The grandchild's spending, counted against this run's budget.
    pub usage: Usage,
}

impl SubagentToolOutput {
    fn error(output: String) -> Self {
        Self {
            output,
            is_error: true,
            usage: Usage::default(),
        }
    }
}

/// The arguments the model gives.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Arguments {
    agent: String,
    task: String,
    #[serde(default)]
    output_schema: Option<serde_json::Value>,
    #[serde(default)]
    max_turns: Option<u32>,
    #[serde(default)]
    max_cost: Option<f64>,
    #[serde(default)]
    tools: Option<Vec<String>>,
    #[serde(default)]
    limits: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The definition offered to the model.
pub(crate) fn definition() -> ToolDefinition {
    ToolDefinition {
        name: SUBAGENT_TOOL_NAME.to_owned(),
        description: "Delegate a self-contained task to another agent, which works on it \
                      alone with its own tools and returns its final answer (or, with \
                      outputSchema, JSON that fits the schema). Its turns and cost come out \
                      of your own budget; a spawn you cannot afford is refused."
            .to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {
                "agent": {"type": "string", "description": "Name of the agent to run, e.g. general or explorer."},
                "task": {"type": "string", "description": "Everything the agent needs to know: it sees nothing of this conversation."},
                "outputSchema": {"type": "object", "description": "JSON Schema its answer must fit (optional)."},
                "maxTurns": {"type": "integer", "minimum": 1, "description": "Model turns it may use (optional; at most what you have left)."},
                "maxCost": {"type": "number", "minimum": 0, "description": "Dollars it may spend (optional; at most what you have left)."},
                "tools": {"type": "array", "items": {"type": "string"}, "description": "Its tools (optional; a subset of yours, default: its agent's that you have too)."},
                "limits": {"type": "object", "description": "Lower limits for it, as in an agent file, e.g. {\"memory\": \"256M\", \"timeout\": \"5m\"} (optional; never more than yours)."}
            },
            "required": ["agent", "task"],
            "additionalProperties": false
        }),
    }
}

/// The spawn request for one call, or the error the model reads.
pub(crate) fn spawn_request(call_id: &str, arguments_json: &str) -> Result<SpawnRequest, String> {
    let args: Arguments = serde_json::from_str(arguments_json).map_err(|e| {
        format!(
            "invalid arguments for `{SUBAGENT_TOOL_NAME}`: {e}; give `agent` and `task` as \
             strings, and optionally `outputSchema`, `maxTurns`, `maxCost`, `tools` and `limits`"
        )
    })?;
    if let Some(cost) = args.max_cost
        && (!cost.is_finite() || cost < 0.0)
    {
        return Err(format!(
            "invalid arguments for `{SUBAGENT_TOOL_NAME}`: maxCost must be a dollar amount \
                 of 0 or more, not {cost}"
        ));
    }
    Ok(SpawnRequest {
        call_id: call_id.to_owned(),
        agent: args.agent,
        task: args.task,
        output_schema_json: args.output_schema.map(|schema| schema.to_string()),
        max_turns: args.max_turns,
        max_cost: args.max_cost,
        tools: args.tools,
        limits_json: args
            .limits
            .map(|limits| serde_json::Value::Object(limits).to_string()),
    })
}

/// The longest this call waits for its reply: the grandchild runs under the
/// same limits as this run, so its wall timeout bounds it, not the tool
/// timeout of ordinary tools.
pub(crate) fn reply_deadline(limits: &Limits) -> Duration {
    Duration::from_millis(limits.wall_timeout_ms.saturating_add(limits.kill_grace_ms))
        .saturating_add(REPLY_SLACK)
}

/// Runs one call; `None` when `cancel` fired first (the waiter is dropped
/// and the supervisor cancels the grandchild with the rest of the tree).
pub(crate) async fn run(
    calls: &SubagentCalls,
    call_id: &str,
    arguments_json: &str,
    deadline: Duration,
    cancel: &CancellationToken,
) -> Option<SubagentToolOutput> {
    let request = match spawn_request(call_id, arguments_json) {
        Ok(request) => request,
        Err(message) => return Some(SubagentToolOutput::error(message)),
    };
    let reply = tokio::select! {
        biased;
        () = cancel.cancelled() => return None,
        reply = tokio::time::timeout(deadline, calls.call(request)) => reply,
    };
    Some(match reply {
        Ok(Some(reply)) => {
            let output = match (reply.is_error, reply.error_code) {
                (true, Some(code)) if !reply.output.starts_with(code.as_str()) => {
                    format!("{code}: {}", reply.output)
                }
                _ => reply.output,
            };
            SubagentToolOutput {
                output,
                is_error: reply.is_error,
                usage: reply.usage,
            }
        }
        Ok(None) => SubagentToolOutput::error(format!(
            "{}: the supervisor is no longer answering; do the work directly",
            ErrorCode::SubagentFailed
        )),
        Err(_) => SubagentToolOutput::error(format!(
            "{}: no reply from the supervisor within {} s; do the work directly",
            ErrorCode::SubagentTimeout,
            deadline.as_secs()
        )),
    })
}

#[cfg(test)]
#[path = "subagent_tool_tests.rs"]
mod tests;
