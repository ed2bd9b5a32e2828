//! `python_execute`: runs model-written Python in a **tool process**
//! ([`crate::process`]: the tool sandbox, its limits, its report).
//!
//! The interpreter is the one the supervisor resolved outside any workspace
//! ([`ToolContext::python_interpreter`]); its prefixes are readable in the
//! sandbox. This module only checks the code and the timeout the model
//! passed, and never starts a process itself.

use std::time::Duration;

use serde::Deserialize;
use subagent_protocol::tool_names::PYTHON_EXECUTE;

use crate::arguments::parse_arguments;
use crate::process::{self, ProcessCall};
use crate::tool::{Tool, ToolContext, ToolError, ToolFuture, ToolOutput};

/// Longest code accepted, bytes: it travels as one `-c` argument, and the
/// kernel caps a single argument at 128 KiB.
pub const MAX_CODE_BYTES: usize = 100 * 1024;

/// The `python_execute` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct PythonExecute;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Arguments {
    code: String,
    timeout_seconds: Option<f64>,
}

impl Tool for PythonExecute {
    fn name(&self) -> &str {
        PYTHON_EXECUTE
    }

    fn description(&self) -> &str {
        "Run Python 3 code in a sandboxed process and get its exit status, stdout and stderr. \
         The working directory is the workspace (readable and writable); files outside it are \
         not accessible, the network is off unless the operator enabled it, and a private \
         temporary directory is $TMPDIR (deleted after the call). Print what you want to see. \
         Each call is a fresh process: nothing is kept between calls except files written to \
         the workspace."
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "description": "Python 3 source to run, as a script (use print() for output)."
                },
                "timeout_seconds": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "description": "Wall-clock limit for this run in seconds (default 60; the operator sets the maximum)."
                }
            },
            "required": ["code"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, arguments: serde_json::Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let arguments: Arguments = parse_arguments(arguments)?;
            let timeout = call_timeout(arguments.timeout_seconds, ctx)?;
            if arguments.code.len() > MAX_CODE_BYTES {
                return Err(ToolError::InvalidArguments(format!(
                    "code is {} bytes, more than the {MAX_CODE_BYTES} accepted; write long \
                     programs to a file in the workspace in several calls and run them with \
                     runpy or exec(open(...).read())",
                    arguments.code.len()
                )));
            }
            if arguments.code.contains('\0') {
                return Err(ToolError::InvalidArguments(
                    "code contains a NUL byte".into(),
                ));
            }
            run(&arguments.code, timeout, ctx).await
        })
    }

    fn deadline(&self, ctx: &ToolContext) -> Duration {
        process::outer_deadline(ctx)
    }
}

/// The call's wall-clock limit: the model's ask, within `1 ms ..= max`.
fn call_timeout(asked: Option<f64>, ctx: &ToolContext) -> Result<Duration, ToolError> {
    let Some(seconds) = asked else {
        return Ok(ctx.timeout);
    };
    if !seconds.is_finite() || seconds <= 0.0 {
        return Err(ToolError::InvalidArguments(format!(
            "timeout_seconds must be a positive number, got {seconds}"
        )));
    }
    let max = ctx.max_timeout.max(ctx.timeout);
    Ok(process::clamp_timeout(
        Some(Duration::try_from_secs_f64(seconds).unwrap_or(max)),
        ctx,
    ))
}

async fn run(code: &str, timeout: Duration, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let interpreter = ctx.python_interpreter().await?;
    let call = ProcessCall {
        program: interpreter.executable,
        // -B: no .pyc files in the workspace; -u: unbuffered, so what was
        // printed before a timeout or a kill is still shown.
        args: vec!["-B".into(), "-u".into(), "-c".into(), code.into()],
        read_only: interpreter.prefixes,
        timeout,
        more_time: format!(
            "pass a larger timeout_seconds (at most {} s)",
            ctx.max_timeout.max(ctx.timeout).as_secs()
        ),
    };
    process::run(call, ctx).await
}

#[cfg(test)]
#[path = "python_tests.rs"]
mod tests;
