//! Running one model tool call that is not `report_back`: lookup, the
//! shared [`subagent_tools::run_tool`] path (argument parsing, timeout,
//! output cap), and cancellation; and the cap on calls per turn.

use subagent_tools::{ToolCallOutput, ToolContext, ToolRegistry, run_tool};
use tokio_util::sync::CancellationToken;

/// Most tool calls run per model turn, 64. Models that call tools in
/// parallel make a handful per turn; hundreds mean a loop or a confused
/// model, and every result goes back to it in the next request (each up to
/// the tool output cap, 50 KiB by default). Calls past this are answered
/// with [`over_the_turn_limit`] instead of run, so each still gets the
/// result the APIs require and the model can make them again.
pub const MAX_TOOL_CALLS_PER_TURN: usize = 64;

/// The answer to a call past [`MAX_TOOL_CALLS_PER_TURN`].
pub(crate) fn over_the_turn_limit(ctx: &ToolContext, name: &str) -> ToolCallOutput {
    ToolCallOutput::error(
        ctx,
        format!(
            "not run: a turn may make at most {MAX_TOOL_CALLS_PER_TURN} tool calls and this \
             was a later one; call `{name}` again in your next turn if you still need it"
        ),
    )
}

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
