//! The JSON-lines protocol of `subagent serve --stdio`: one request per
//! line read into a [`Request`], and the lines the server writes back
//! (responses, error responses, notifications). `schemas/serve-request.schema.json`
//! and `schemas/serve-message.schema.json` describe the same shapes.
//!
//! Pure: no I/O and no runs, so every rule here is tested without a
//! server. A spawn's params are read by the parser both servers share
//! ([`super::spawn`], with this wire's [`STDIO`] rules); it never resolves
//! config or agent files: the server does that with a spawn's overrides.

pub use super::spawn::Spawn;
use super::spawn::{STDIO, parse_spawn};
use crate::jobs::{JobId, JobState, Streaming};
use serde::Serialize;
use serde_json::{Value, json};
use subagent_protocol::session::{LifecycleEvent, SessionEntry, SessionLine};

/// The code of an error response, as the `error.code` string names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ResponseCode {
    /// The line is not JSON.
    ParseError,
    /// JSON, but not a request object (`method` missing or not a string).
    InvalidRequest,
    /// A method the server does not have.
    UnknownMethod,
    /// The method's `params` are wrong.
    InvalidParams,
    /// A spawn asks above the server's ceilings (a limit, tools, network,
    /// provider, model, workspace): the message names what and how far.
    /// Spelled as the result objects' `INVALID_INPUT`.
    InvalidInput,
    /// No job has that id.
    UnknownJob,
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
    /// What kind of error.
    pub code: ResponseCode,
    /// What is wrong, naming the field.
    pub message: String,
}

/// Reads one line.
pub fn parse_line(line: &str) -> Result<Request, BadLine> {
    let value: Value = serde_json::from_str(line).map_err(|e| BadLine {
        id: Value::Null,
        code: ResponseCode::ParseError,
        message: format!("the line is not JSON: {e}"),
    })?;
    let Value::Object(mut object) = value else {
        return Err(BadLine {
            id: Value::Null,
            code: ResponseCode::InvalidRequest,
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
                ResponseCode::InvalidRequest,
                "`method` must be a string".into(),
            ));
        }
        None => return Err(bad(ResponseCode::InvalidRequest, "missing `method`".into())),
    };
    let params = match object.remove("params") {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(p)) => p,
        Some(_) => {
            return Err(bad(
                ResponseCode::InvalidParams,
                "`params` must be an object".into(),
            ));
        }
    };
    let method = match method.as_str() {
        "spawn" => Method::Spawn(Box::new(
            parse_spawn(&STDIO, params).map_err(|m| bad(ResponseCode::InvalidParams, m))?,
        )),
        "status" => {
            Method::Status(job_id(&params).map_err(|m| bad(ResponseCode::InvalidParams, m))?)
        }
        "wait" => Method::Wait(job_id(&params).map_err(|m| bad(ResponseCode::InvalidParams, m))?),
        "cancel" => {
            Method::Cancel(job_id(&params).map_err(|m| bad(ResponseCode::InvalidParams, m))?)
        }
        "list" => Method::List,
        other => {
            return Err(bad(
                ResponseCode::UnknownMethod,
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

/// A response line.
pub fn response(id: &Value, result: Value) -> String {
    json!({"id": id, "result": result}).to_string()
}

/// An error response line.
pub fn error_response(id: &Value, code: ResponseCode, message: &str) -> String {
    json!({"id": id, "error": {"code": code, "message": message}}).to_string()
}

/// The error answer to a line of `bytes` bytes, over the cap of `max`.
pub fn line_too_long(bytes: usize, max: usize) -> String {
    error_response(
        &Value::Null,
        ResponseCode::InvalidRequest,
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
        ResponseCode::ParseError,
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
