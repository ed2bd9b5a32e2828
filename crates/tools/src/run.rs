//! One tool call, from the model's raw arguments to the text the model sees.
//!
//! Every failure becomes a readable error result rather than an `Err`: the
//! model is told what went wrong and the loop goes on. The call is raced
//! against its timeout here; cancellation is the caller's (drop the future).

use std::time::Duration;

use crate::output_cap::cap_output;
use crate::tool::{Tool, ToolContext, ToolError};

/// What the model is shown for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallOutput {
    /// Output or error text, capped.
    pub output: String,
    /// True when the call failed.
    pub is_error: bool,
}

impl ToolCallOutput {
    /// A failed call: `message`, capped to `ctx.output_caps`.
    pub fn error(ctx: &ToolContext, message: String) -> Self {
        Self {
            output: cap_output(
                &message,
                ctx.output_caps.max_bytes,
                ctx.output_caps.max_lines,
            )
            .text,
            is_error: true,
        }
    }
}

/// Parses `arguments_json`, runs `tool` under `ctx.timeout` and caps what
/// comes back to `ctx.output_caps`.
pub async fn run_tool(tool: &dyn Tool, arguments_json: &str, ctx: &ToolContext) -> ToolCallOutput {
    let name = tool.name();
    let arguments = match parse_arguments(arguments_json) {
        Ok(arguments) => arguments,
        Err(reason) => {
            return ToolCallOutput::error(
                ctx,
                format!(
                    "invalid JSON arguments for tool `{name}`: {reason}; send the arguments as one \
                     JSON object matching the tool's parameters schema"
                ),
            );
        }
    };
    // The file tools and the disk measurement go by the workspace's path:
    // once it leads elsewhere, no tool runs.
    if let Some(pin) = &ctx.workspace_pin
        && let Err(why) = pin.check(&ctx.workspace_dir)
    {
        return ToolCallOutput::error(ctx, format!("tool `{name}` not run: {why}"));
    }
    let deadline = tool.deadline(ctx);
    let result = match tokio::time::timeout(deadline, tool.call(arguments, ctx)).await {
        Ok(result) => result,
        Err(_) => Err(ToolError::TimedOut {
            after_ms: duration_ms(deadline),
        }),
    };
    match result {
        Ok(output) => {
            let capped = cap_output(
                &output.text,
                ctx.output_caps.max_bytes,
                ctx.output_caps.max_lines,
            );
            ToolCallOutput {
                output: capped.text,
                is_error: false,
            }
        }
        Err(e @ ToolError::TimedOut { .. }) => ToolCallOutput::error(
            ctx,
            format!("tool `{name}` {e}; try a smaller request or a narrower search"),
        ),
        Err(e) => ToolCallOutput::error(ctx, format!("tool `{name}` failed: {e}")),
    }
}

/// An empty argument string counts as `{}`: some providers send nothing for
/// a call without parameters.
fn parse_arguments(arguments_json: &str) -> Result<serde_json::Value, String> {
    if arguments_json.trim().is_empty() {
        return Ok(serde_json::Value::Object(serde_json::Map::new()));
    }
    match serde_json::from_str::<serde_json::Value>(arguments_json) {
        Ok(value @ serde_json::Value::Object(_)) => Ok(value),
        Ok(other) => Err(format!("expected a JSON object, got {}", json_kind(&other))),
        Err(e) => Err(e.to_string()),
    }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
