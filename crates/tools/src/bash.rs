//! `bash`: a model-written shell command, run as `/bin/bash -c COMMAND` in a
//! **tool process** ([`crate::process`]: the same sandbox, limits, output
//! caps and report as `python_execute`), with the workspace as its working
//! directory.
//!
//! The parameters are Claude Code's `Bash` tool's, so models and agent
//! files written for it work unchanged: `command`, an optional `timeout` in
//! milliseconds (capped by `--tool-timeout-max`), an optional
//! `description` (shown in the session file with the call, not run) and
//! `run_in_background`, accepted only as `false`: a background process
//! would outlive its call, which the sandbox never lets happen.
//!
//! This module only checks the arguments; it never starts a process itself.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use subagent_protocol::tool_names::BASH;

use crate::arguments::parse_arguments;
use crate::process::{self, ProcessCall};
use crate::tool::{Tool, ToolContext, ToolError, ToolFuture};

/// The shell: bash, by absolute path, as Claude Code runs its commands.
pub const SHELL: &str = "/bin/bash";

/// Longest command accepted, bytes: it travels as one `-c` argument, and
/// the kernel caps a single argument at 128 KiB.
pub const MAX_COMMAND_BYTES: usize = 100 * 1024;

/// The `bash` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct Bash;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Arguments {
    command: String,
    /// Milliseconds, as Claude Code's.
    timeout: Option<f64>,
    /// Shown with the call in the session file; never run (accepted so a
    /// Claude Code call is not refused for it).
    #[serde(default, rename = "description")]
    _description: Option<String>,
    #[serde(default)]
    run_in_background: bool,
}

impl Tool for Bash {
    fn name(&self) -> &str {
        BASH
    }

    fn description(&self) -> &str {
        "Run a bash command (`/bin/bash -c`) in a sandboxed process and get its exit code, \
         stdout and stderr. The working directory is the workspace (readable and writable); \
         files outside it are not accessible, the network is off unless the operator enabled \
         it, and a private temporary directory is $TMPDIR (deleted after the call). Each call \
         is a fresh shell: cd, variables and background jobs do not carry over; only files \
         written to the workspace are kept. Prefer the file tools to read, search and edit \
         files."
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": "The command to run."
                },
                "timeout": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "description": "Wall-clock limit in milliseconds (default 60000; the operator sets the maximum)."
                },
                "description": {
                    "type": "string",
                    "description": "What the command does, in 5-10 words."
                },
                "run_in_background": {
                    "type": "boolean",
                    "description": "Not supported here: must be false or absent."
                }
            },
            "required": ["command"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, arguments: serde_json::Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let arguments: Arguments = parse_arguments(arguments)?;
            let timeout = call_timeout(arguments.timeout, ctx)?;
            check_command(&arguments.command)?;
            if arguments.run_in_background {
                return Err(ToolError::InvalidArguments(
                    "run_in_background is not supported: every process of a call is stopped \
                     when the call ends; run the command in the foreground (with a timeout), \
                     or write its output to a file in the workspace"
                        .into(),
                ));
            }
            let call = ProcessCall {
                program: PathBuf::from(SHELL),
                args: vec!["-c".into(), arguments.command.into()],
                read_only: Vec::new(),
                timeout,
                more_time: format!(
                    "pass a larger timeout (milliseconds, at most {})",
                    ctx.max_timeout.max(ctx.timeout).as_millis()
                ),
            };
            process::run(call, ctx).await
        })
    }

    fn deadline(&self, ctx: &ToolContext) -> Duration {
        process::outer_deadline(ctx)
    }
}

fn check_command(command: &str) -> Result<(), ToolError> {
    if command.trim().is_empty() {
        return Err(ToolError::InvalidArguments(
            "command is empty; pass the shell command to run".into(),
        ));
    }
    if command.len() > MAX_COMMAND_BYTES {
        return Err(ToolError::InvalidArguments(format!(
            "command is {} bytes, more than the {MAX_COMMAND_BYTES} accepted; write a long \
             script to a file in the workspace (write_file) and run it with bash",
            command.len()
        )));
    }
    if command.contains('\0') {
        return Err(ToolError::InvalidArguments(
            "command contains a NUL byte".into(),
        ));
    }
    Ok(())
}

/// The call's wall-clock limit: the model's ask in milliseconds, within
/// `1 ms ..= max`.
fn call_timeout(asked_ms: Option<f64>, ctx: &ToolContext) -> Result<Duration, ToolError> {
    let Some(ms) = asked_ms else {
        return Ok(ctx.timeout);
    };
    if !ms.is_finite() || ms <= 0.0 {
        return Err(ToolError::InvalidArguments(format!(
            "timeout is in milliseconds and must be a positive number, got {ms}"
        )));
    }
    let max = ctx.max_timeout.max(ctx.timeout);
    Ok(process::clamp_timeout(
        Some(Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(max)),
        ctx,
    ))
}

#[cfg(test)]
#[path = "bash_tests.rs"]
mod tests;
