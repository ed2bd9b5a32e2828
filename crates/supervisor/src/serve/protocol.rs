//! The JSON-lines protocol of `subagent serve --stdio`: one request per
//! line read into a [`Request`], and the lines the server writes back
//! (responses, error responses, notifications). `schemas/serve-request.schema.json`
//! and `schemas/serve-message.schema.json` describe the same shapes.
//!
//! Pure: no I/O and no runs, so every rule here is tested without a
//! server. It never resolves config or agent files: the server does that
//! with a spawn's overrides.

use std::collections::BTreeMap;

use crate::config::LimitSet;
use crate::jobs::{JobId, JobMode, JobState, Streaming};
use serde::Deserialize;
use serde_json::{Value, json};
use subagent_protocol::session::{LifecycleEvent, SessionEntry, SessionLine};

/// Error codes of error responses.
pub mod codes {
    /// The line is not JSON.
    pub const PARSE_ERROR: &str = "PARSE_ERROR";
    /// JSON, but not a request object (`method` missing or not a string).
    pub const INVALID_REQUEST: &str = "INVALID_REQUEST";
    /// A method the server does not have.
    pub const UNKNOWN_METHOD: &str = "UNKNOWN_METHOD";
    /// The method's `params` are wrong.
    pub const INVALID_PARAMS: &str = "INVALID_PARAMS";
    /// A spawn asks above the server's ceilings (a limit, tools, network,
    /// provider, model, workspace): the message names what and how far.
    pub const INVALID_INPUT: &str = "INVALID_INPUT";
    /// No job has that id.
    pub const UNKNOWN_JOB: &str = "UNKNOWN_JOB";
}

/// A `spawn`'s params, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Spawn {
    /// The agent, when named (else the server's default).
    pub agent: Option<String>,
    /// The tasks in order; exactly one for [`JobMode::Single`].
    pub tasks: Vec<String>,
    /// How they run.
    pub mode: JobMode,
    /// JSON Schema text the output must satisfy.
    pub output_schema_json: Option<String>,
    /// Answer with the job id at once.
    pub background: bool,
    /// Provider override.
    pub provider: Option<String>,
    /// Model override.
    pub model: Option<String>,
    /// Limit overrides.
    pub limits: LimitSet,
    /// Tools, a subset of the server's.
    pub tools: Option<Vec<String>>,
    /// Network for tool processes.
    pub allow_network: Option<bool>,
    /// Workspace, the server's or below it.
    pub workspace: Option<std::path::PathBuf>,
    /// A recorded run to continue (a run id); its one task is the
    /// follow-up, empty to continue an interrupted run as it stood.
    pub resume: Option<String>,
}

/// What a line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Method {
    /// Start a job.
    Spawn(Box<Spawn>),
    /// A job's status.
    Status(JobId),
    /// Wait for a job's result.
    Wait(JobId),
    /// Cancel a job.
    Cancel(JobId),
    /// Every job.
    List,
}

/// One request line.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The client's id, echoed in the response (any JSON value).
    pub id: Value,
    /// What it asks.
    pub method: Method,
}

/// A line that is not a request the server can carry out: answered with
/// an error response, and the server goes on.
#[derive(Debug, Clone, PartialEq)]
pub struct BadLine {
    /// The request's id when it could be read, else null.
    pub id: Value,
    /// One of [`codes`].
    pub code: &'static str,
    /// What is wrong, naming the field.
    pub message: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawSpawn {
    agent: Option<String>,
    task: Option<String>,
    tasks: Option<Vec<String>>,
    mode: Option<String>,
    output_schema: Option<Value>,
    #[serde(default)]
    background: bool,
    provider: Option<String>,
    model: Option<String>,
    limits: Option<BTreeMap<String, Value>>,
    tools: Option<Vec<String>>,
    allow_network: Option<bool>,
    workspace: Option<std::path::PathBuf>,
    resume: Option<String>,
}

/// Reads one line.
pub fn parse_line(line: &str) -> Result<Request, BadLine> {
    let value: Value = serde_json::from_str(line).map_err(|e| BadLine {
        id: Value::Null,
        code: codes::PARSE_ERROR,
        message: format!("the line is not JSON: {e}"),
    })?;
    let Value::Object(mut object) = value else {
        return Err(BadLine {
            id: Value::Null,
            code: codes::INVALID_REQUEST,
            message: "a request is a JSON object with id, method and params".to_owned(),
        });
    };
    let id = object.remove("id").unwrap_or(Value::Null);
    let bad = |code, message: String| BadLine {
        id: id.clone(),
        code,
        message,
    };
    let method = match object.remove("method") {
        Some(Value::String(m)) => m,
        Some(_) => {
            return Err(bad(
                codes::INVALID_REQUEST,
                "`method` must be a string".into(),
            ));
        }
        None => return Err(bad(codes::INVALID_REQUEST, "missing `method`".into())),
    };
    let params = match object.remove("params") {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(p)) => p,
        Some(_) => {
            return Err(bad(
                codes::INVALID_PARAMS,
                "`params` must be an object".into(),
            ));
        }
    };
    let method = match method.as_str() {
        "spawn" => Method::Spawn(Box::new(
            parse_spawn(params).map_err(|m| bad(codes::INVALID_PARAMS, m))?,
        )),
        "status" => Method::Status(job_id(&params).map_err(|m| bad(codes::INVALID_PARAMS, m))?),
        "wait" => Method::Wait(job_id(&params).map_err(|m| bad(codes::INVALID_PARAMS, m))?),
        "cancel" => Method::Cancel(job_id(&params).map_err(|m| bad(codes::INVALID_PARAMS, m))?),
        "list" => Method::List,
        other => {
            return Err(bad(
                codes::UNKNOWN_METHOD,
                format!(
                    "unknown method `{other}`; the methods are spawn, status, wait, cancel, list"
                ),
            ));
        }
    };
    Ok(Request { id, method })
}

fn job_id(params: &serde_json::Map<String, Value>) -> Result<JobId, String> {
    match params.get("jobId") {
        Some(Value::String(id)) if !id.is_empty() => Ok(JobId(id.clone())),
        _ => Err("`params.jobId` (a string) is required".to_owned()),
    }
}

/// A spawn's `mode` as the job mode it names.
fn parse_mode(mode: &str) -> Result<JobMode, String> {
    match mode {
        "single" => Ok(JobMode::Single),
        "parallel" => Ok(JobMode::Parallel),
        "chain" => Ok(JobMode::Chain),
        other => Err(format!(
            "unknown mode `{other}`: use single, parallel or chain"
        )),
    }
}

/// A job mode as a spawn's `mode` names it.
fn mode_name(mode: JobMode) -> &'static str {
    match mode {
        JobMode::Single => "single",
        JobMode::Parallel => "parallel",
        JobMode::Chain => "chain",
    }
}

fn parse_spawn(params: serde_json::Map<String, Value>) -> Result<Spawn, String> {
    let mut raw: RawSpawn = serde_json::from_value(Value::Object(params))
        .map_err(|e| format!("invalid spawn params: {e}"))?;
    let resuming = raw.resume.is_some();
    if resuming && (raw.tasks.is_some() || raw.mode.as_deref().is_some_and(|m| m != "single")) {
        return Err("`resume` continues one run: give at most `task`, mode single".to_owned());
    }
    if resuming && raw.task.is_none() {
        // No follow-up: an interrupted run continues as it stood.
        raw.task = Some(String::new());
    }
    let mode = raw.mode.as_deref().map(parse_mode);
    let mode = match (mode, &raw.task, &raw.tasks) {
        (_, Some(_), Some(_)) => return Err("give `task` or `tasks`, not both".to_owned()),
        (Some(Err(unknown)), _, _) => return Err(unknown),
        (None | Some(Ok(JobMode::Single)), Some(_), None) => JobMode::Single,
        (Some(Ok(m @ (JobMode::Parallel | JobMode::Chain))), Some(_), None) => {
            return Err(format!(
                "mode {} takes `tasks` (a list), not `task`",
                mode_name(m)
            ));
        }
        (None | Some(Ok(JobMode::Parallel)), None, Some(_)) => JobMode::Parallel,
        (Some(Ok(JobMode::Chain)), None, Some(_)) => JobMode::Chain,
        (Some(Ok(JobMode::Single)), None, Some(_)) => {
            return Err("mode single takes `task`, not `tasks`".to_owned());
        }
        (_, None, None) => {
            return Err(
                "missing task: give `task` (or `tasks` with mode parallel or chain)".to_owned(),
            );
        }
    };
    let tasks: Vec<String> = raw
        .task
        .into_iter()
        .chain(raw.tasks.unwrap_or_default())
        .collect();
    if tasks.is_empty() {
        return Err("`tasks` is empty: give at least one task".to_owned());
    }
    if let Some(i) = tasks.iter().position(|t| t.trim().is_empty() && !resuming) {
        return Err(format!("task {} is empty", i + 1));
    }
    let output_schema_json = match raw.output_schema {
        None => None,
        Some(schema @ Value::Object(_)) => Some(schema.to_string()),
        Some(_) => return Err("`outputSchema` must be a JSON Schema object".to_owned()),
    };
    Ok(Spawn {
        agent: raw.agent,
        tasks,
        mode,
        output_schema_json,
        background: raw.background,
        provider: raw.provider,
        model: raw.model,
        limits: LimitSet::from_json(raw.limits.unwrap_or_default())?,
        tools: raw.tools,
        allow_network: raw.allow_network,
        workspace: raw.workspace,
        resume: raw.resume,
    })
}

/// A response line.
pub fn response(id: &Value, result: Value) -> String {
    json!({"id": id, "result": result}).to_string()
}

/// An error response line.
pub fn error_response(id: &Value, code: &str, message: &str) -> String {
    json!({"id": id, "error": {"code": code, "message": message}}).to_string()
}

/// The error answer to a line of `bytes` bytes, over the cap of `max`.
pub fn line_too_long(bytes: usize, max: usize) -> String {
    error_response(
        &Value::Null,
        codes::INVALID_REQUEST,
        &format!(
            "the line is {bytes} bytes, more than the {} MiB a request may have; it was skipped. \
             Send long tasks as files in the workspace and name them in the task",
            max / (1024 * 1024)
        ),
    )
}

/// The error answer to a line that is not UTF-8 from byte `offset` on.
pub fn not_utf8(offset: usize) -> String {
    error_response(
        &Value::Null,
        codes::PARSE_ERROR,
        &format!(
            "the line is not UTF-8 (invalid byte at offset {offset}); send each request as one \
             line of JSON text in UTF-8"
        ),
    )
}

/// A progress notification line: the job's state (`queued` while it
/// waits for a concurrency slot, then `running`) and its progress so far.
pub fn progress(job_id: &JobId, state: JobState, streaming: &Streaming) -> String {
    json!({
        "method": "progress",
        "params": {"jobId": job_id, "state": state, "details": {"streaming": streaming}},
    })
    .to_string()
}

/// The notification of a background job's ending: its method is the
/// line's event type (`subagent:complete`, `subagent:error`,
/// `subagent:aborted`), its params the lifecycle line itself.
pub fn ending(line: &SessionLine) -> String {
    let method = match &line.entry {
        SessionEntry::AgentEvent(e) => match e.event_type {
            LifecycleEvent::Complete => "subagent:complete",
            LifecycleEvent::Error => "subagent:error",
            LifecycleEvent::Aborted | LifecycleEvent::Start => "subagent:aborted",
        },
        _ => "subagent:error",
    };
    json!({"method": method, "params": line}).to_string()
}

#[cfg(test)]
#[path = "protocol_tests.rs"]
mod tests;
