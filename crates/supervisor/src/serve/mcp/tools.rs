//! The MCP tools of `subagent serve --mcp`: their names and input schemas
//! as `tools/list` shows them, a `subagent` call's arguments read into a
//! [`Spawn`], and a result object turned into a `tools/call` result.
//!
//! Pure: no process, no I/O, no protocol traffic, so every rule here is
//! tested without a server. It never resolves config or agent files: the
//! server does that with the call's overrides.

use std::sync::Arc;

use crate::config::LimitKey;
use crate::jobs::{JobState, JobStatus};
use crate::serve::spawn::{self, Spawn};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::{Value, json};
use subagent_protocol::result::{ContentItem, ErrorInfo, Mode, SubagentResult};
use subagent_protocol::{ErrorCode, RunMode};

/// The tool that starts runs.
pub(crate) const SPAWN_TOOL: &str = "subagent";
/// The tool that reports a background job.
pub(crate) const STATUS_TOOL: &str = "subagent_status";
/// The tool that cancels a background job.
pub(crate) const CANCEL_TOOL: &str = "subagent_cancel";

/// Reads a `subagent` call's arguments (the parser both servers share,
/// with this wire's rules); the error says what is wrong in the words of
/// the input schema.
pub(crate) fn parse_spawn(arguments: Option<JsonObject>) -> Result<Spawn, String> {
    spawn::parse_spawn(&spawn::MCP, arguments.unwrap_or_default())
}

/// A `subagent_status` or `subagent_cancel` call's job id.
pub(crate) fn parse_job_id(arguments: Option<JsonObject>) -> Result<String, String> {
    match arguments.as_ref().and_then(|a| a.get("jobId")) {
        Some(Value::String(id)) if !id.is_empty() => Ok(id.clone()),
        _ => Err("invalid arguments: `jobId` (a string) is required".to_owned()),
    }
}

/// The three tools, as `tools/list` shows them.
pub(crate) fn tool_list() -> Vec<Tool> {
    let limit_names: Vec<&str> = LimitKey::ALL.iter().map(|k| k.agent_key()).collect();
    let spawn = json!({
        "type": "object",
        "properties": {
            "agent": {"type": "string", "description": "Agent name (`subagent agents ls`); default: the server's --agent, else general."},
            "task": {"type": "string", "description": "The task (mode single), or the first of several. With `resume`: the follow-up."},
            "resume": {"type": "string", "description": "Continue a recorded run: its run id (every result names it in `_meta.runId`). Its conversation comes first, then `task`; without `task`, an interrupted run continues from its last complete turn."},
            "tasks": {"type": "array", "items": {"type": "string"}, "description": "Tasks for mode parallel or chain (after `task`, if given)."},
            "mode": {"type": "string", "enum": RunMode::ALL.map(RunMode::as_str), "default": RunMode::Single.as_str(),
                "description": "single: one task; parallel: all at once; chain: one after another, `{previous}` in a task replaced by the previous output."},
            "concurrency": {"type": "integer", "minimum": 1, "description": "Mode parallel: children running at once (default 4, lowered to the server's max_concurrent; a value above it is refused). Runs over the server's limit wait for a slot."},
            "outputSchema": {"type": "object", "description": "JSON Schema the answer must satisfy; the answer object is returned as structuredContent."},
            "background": {"type": "boolean", "default": false, "description": "Return a job id at once; ask subagent_status for the result."},
            "provider": {"type": "string", "description": "Provider override: a configured provider or an API kind."},
            "model": {"type": "string", "description": "Model override."},
            "limits": {"type": "object", "description": format!("Limit overrides, as in an agent file: {}. The server's own are ceilings: ask for less, never more.", limit_names.join(", ")),
                "propertyNames": {"enum": limit_names},
                "additionalProperties": {"type": ["string", "number"]}},
            "tools": {"type": "array", "items": {"type": "string"}, "description": "Tools of the child, a subset of the server's; [] for none."},
            "allowNetwork": {"type": "boolean", "description": "Network for tool processes; true only on a server started with --allow-network."},
            "workspace": {"type": "string", "description": "The server's workspace or a directory below it (relative to the server's workspace)."},
            "isolation": {"type": "string", "enum": ["overlay", "none"], "description": "overlay: the child's writes go to a copy-on-write layer applied when it completes; none (in place) only on a server started with --isolation none."},
            "apply": {"type": "string", "enum": ["on-success", "never"], "description": "on-success: an overlay child's changes are applied when it completes; never: kept for `subagent apply` (on-success only on a server that applies)."}
        },
        "additionalProperties": false
    });
    let job = json!({
        "type": "object",
        "properties": {"jobId": {"type": "string", "description": "The id a background `subagent` call returned."}},
        "required": ["jobId"],
        "additionalProperties": false
    });
    vec![
        Tool::new(
            SPAWN_TOOL,
            "Run a subagent (or several: parallel, chain) as a process-isolated, resource-capped worker and return its answer.",
            schema_object(spawn),
        ),
        Tool::new(
            STATUS_TOOL,
            "State, progress and (once over) the result of a background subagent job.",
            schema_object(job.clone()),
        ),
        Tool::new(
            CANCEL_TOOL,
            "Cancel a background subagent job; its processes are stopped.",
            schema_object(job),
        ),
    ]
}

fn schema_object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// A result object as a tool result: its text as content; with a schema
/// the structured output as `structuredContent` (one object for a single
/// run or a chain's last step, `{"results": [...]}` for a parallel call);
/// a failure as `isError` with one text block, [`error_text`].
pub(crate) fn call_result(result: &SubagentResult, with_schema: bool) -> CallToolResult {
    // Every result names its run, so the caller can `resume` it.
    let meta = result.details.run_id.as_ref().map(|id| {
        let mut meta = JsonObject::new();
        meta.insert("runId".to_owned(), Value::String(id.clone()));
        rmcp::model::MetaObject(meta)
    });
    if let Some(error) = &result.details.error {
        let mut out = CallToolResult::error(vec![ContentBlock::text(error_text(error, result))]);
        out.meta = meta;
        return out;
    }
    let text: Vec<ContentBlock> = result_texts(result)
        .map(|text| ContentBlock::text(text.to_owned()))
        .collect();
    let mut out = CallToolResult::success(text);
    if with_schema {
        out.structured_content = structured(result);
    }
    out.meta = meta;
    out
}

/// The result's non-empty texts.
fn result_texts(result: &SubagentResult) -> impl Iterator<Item = &str> {
    result
        .content
        .iter()
        .map(|ContentItem::Text { text }| text.as_str())
        .filter(|text| !text.is_empty())
}

/// A failure as one text: `CODE: message`, then (after a blank line) what
/// the result's text adds to it: a partial answer, or the diagnostic's
/// detail (last event, stderr) without its first line, which repeats the
/// error (`subagent failed (CODE): message`, from `run::assemble`). A text
/// that is the message again is left out: a client shows every block, and
/// the same error twice reads as two errors.
fn error_text(error: &ErrorInfo, result: &SubagentResult) -> String {
    let mut out = format!("{}: {}", error.code, error.message);
    let repeated = format!("subagent failed ({}): {}", error.code, error.message);
    for text in result_texts(result) {
        let rest = text
            .strip_prefix(repeated.as_str())
            .unwrap_or(text)
            .trim_matches('\n');
        if rest.trim().is_empty() || rest.trim() == error.message.trim() {
            continue;
        }
        out.push_str("\n\n");
        out.push_str(rest);
    }
    out
}

fn structured(result: &SubagentResult) -> Option<Value> {
    let outputs: Vec<Value> = result
        .details
        .results
        .iter()
        .map(|r| r.structured_output.clone().unwrap_or(Value::Null))
        .collect();
    match result.details.mode {
        Mode::Run(RunMode::Parallel) => Some(json!({ "results": outputs })),
        _ => result
            .details
            .results
            .last()
            .and_then(|r| r.structured_output.clone()),
    }
}

/// A background job's start: its id and state (`queued` when every
/// concurrency slot is taken, else `running`), as text and as
/// `structuredContent`.
pub(crate) fn job_started(job_id: &str, state: JobState) -> CallToolResult {
    let how = match state {
        JobState::Queued => {
            "queued in the background (every concurrency slot is taken; it starts when one frees)"
        }
        _ => "started in the background",
    };
    let mut out = CallToolResult::success(vec![ContentBlock::text(format!(
        "job {job_id} {how}; subagent_status {{\"jobId\": \"{job_id}\"}} reports it"
    ))]);
    out.structured_content = Some(json!({ "jobId": job_id, "state": state }));
    out
}

/// A job's status: one line of text (state, turns, tokens), the result's
/// text once over, and the whole status object as `structuredContent`.
pub(crate) fn job_status(status: &JobStatus) -> CallToolResult {
    let state = serde_json::to_value(status.state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let streaming = &status.streaming;
    let mut content = vec![ContentBlock::text(format!(
        "job {}: {state}; {} turns, {} tokens in, {} out",
        status.job_id,
        streaming.turn_count,
        streaming.usage.input_tokens,
        streaming.usage.output_tokens
    ))];
    if let Some(result) = &status.result {
        match &result.details.error {
            Some(error) => content.push(ContentBlock::text(error_text(error, result))),
            None => {
                content.extend(result_texts(result).map(|text| ContentBlock::text(text.to_owned())))
            }
        }
    }
    let mut out = CallToolResult::success(content);
    out.structured_content = serde_json::to_value(status).ok();
    out
}

/// A refusal before anything ran, as a tool result.
pub(crate) fn refusal(code: ErrorCode, message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("{code}: {message}"))])
}

#[cfg(test)]
#[path = "tools_tests.rs"]
mod tests;
