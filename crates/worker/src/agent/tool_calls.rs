//! Running one model tool call that is not `report_back`: lookup, the
//! shared [`subagent_tools::run_tool`] path (argument parsing, timeout,
//! output cap), and cancellation.

use subagent_tools::{ToolCallOutput, ToolContext, ToolRegistry, run_tool};
use tokio_util::sync::CancellationToken;

/// Runs `name` with `arguments_json`; `None` when cancelled first.
///
/// An unknown name is answered with the tools that do exist (`available`,
/// already formatted), so the model can correct itself.
pub(crate) async fn run_call(
    tools: &ToolRegistry,
    available: &str,
    ctx: &ToolContext,
    name: &str,
    arguments_json: &str,
    cancel: &CancellationToken,
) -> Option<ToolCallOutput> {
    let Some(tool) = tools.get(name) else {
        let message = format!("unknown tool `{name}`; available tools: {available}");
        return Some(ToolCallOutput::error(ctx, message));
    };
    tokio::select! {
        biased;
        () = cancel.cancelled() => None,
        output = run_tool(tool.as_ref(), arguments_json, ctx) => Some(output),
    }
}

/// The names offered to the model, for the unknown-tool message.
pub(crate) fn available_list(names: &[String]) -> String {
    if names.is_empty() {
        "(none)".to_owned()
    } else {
        names.join(", ")
    }
}
