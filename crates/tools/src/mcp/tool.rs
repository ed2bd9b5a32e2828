//! The tools a server offers, as the model sees them: `mcp__SERVER__TOOL`
//! with the server's description and input schema, within bounds (name
//! length and characters, schema size, tools per server), and the call that
//! forwards to the server under its `tool_timeout_ms`.
//!
//! What is left out is said in a note, never silently dropped.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use subagent_protocol::McpServerSpec;
use subagent_protocol::mcp_server::mcp_tool_name;
use subagent_protocol::message::LogLevel;

use super::McpNote;
use super::content;
use super::server::{MAX_SCHEMA_BYTES, MAX_TOOLS_PER_SERVER, RunningServer, with_stderr};
use crate::tool::{Tool, ToolContext, ToolError, ToolFuture, ToolOutput};

/// Longest tool name a model API accepts (OpenAI's and Anthropic's
/// function names), `mcp__SERVER__TOOL` included.
pub(crate) const MAX_TOOL_NAME_CHARS: usize = 64;

/// Longest description passed on, bytes; the rest is cut.
const MAX_DESCRIPTION_BYTES: usize = 4 * 1024;

/// Time past the server's own tool timeout before the worker drops a call:
/// the server's timeout report wins.
const DEADLINE_MARGIN: Duration = Duration::from_secs(5);

/// How long a failed call waits to learn whether the server exited (its
/// pipes are drained and its tree reaped first).
const EXIT_SEEN_WITHIN: Duration = Duration::from_secs(2);

/// One tool of a server.
pub(crate) struct McpTool {
    server: Arc<RunningServer>,
    /// The server's name for it.
    remote: String,
    /// `mcp__SERVER__TOOL`.
    name: String,
    description: String,
    parameters: serde_json::Value,
}

/// The tools of `server` that `spec` selects, and notes on what was left out
/// and on the start.
pub(crate) fn offered(
    server: &Arc<RunningServer>,
    spec: &McpServerSpec,
) -> (Vec<Arc<dyn Tool>>, Vec<McpNote>) {
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    let mut left_out = Vec::new();
    for listed in &server.listed {
        let remote = listed.name.as_ref();
        if !spec.tools.offers(remote) {
            continue;
        }
        let name = mcp_tool_name(&spec.name, remote);
        if let Err(why) = check_name(remote, &name) {
            left_out.push(format!("`{remote}` ({why})"));
            continue;
        }
        let parameters = match parameters(listed.input_schema.as_ref()) {
            Ok(parameters) => parameters,
            Err(why) => {
                left_out.push(format!("`{remote}` ({why})"));
                continue;
            }
        };
        if tools.len() == MAX_TOOLS_PER_SERVER {
            left_out.push(format!(
                "`{remote}` (past the {MAX_TOOLS_PER_SERVER} tools a server may offer; name the \
                 ones wanted as mcp__{}__TOOL)",
                spec.name
            ));
            continue;
        }
        tools.push(Arc::new(McpTool {
            server: Arc::clone(server),
            remote: remote.to_owned(),
            name,
            description: description(listed.description.as_deref(), &spec.name),
            parameters,
        }));
    }
    let mut notes = vec![McpNote {
        level: LogLevel::Info,
        text: format!(
            "the MCP server `{}` started in {} ms (pid {}): it lists {} tool(s), {} offered{}",
            spec.name,
            server.started_in.as_millis(),
            server.pid,
            server.listed.len(),
            tools.len(),
            if tools.is_empty() {
                String::new()
            } else {
                format!(
                    ": {}",
                    tools
                        .iter()
                        .map(|t| t.name().to_owned())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        ),
    }];
    if !left_out.is_empty() {
        notes.push(McpNote {
            level: LogLevel::Warn,
            text: format!(
                "the MCP server `{}`: left out {}",
                spec.name,
                left_out.join(", ")
            ),
        });
    }
    let missing: Vec<&String> = spec
        .tools
        .only
        .iter()
        .flatten()
        .filter(|wanted| {
            !server
                .listed
                .iter()
                .any(|l| l.name.as_ref() == wanted.as_str())
        })
        .collect();
    if !missing.is_empty() {
        notes.push(McpNote {
            level: LogLevel::Warn,
            text: format!(
                "the MCP server `{}` has no tool named {}; it lists: {}",
                spec.name,
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                server
                    .listed
                    .iter()
                    .map(|l| l.name.as_ref())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    (tools, notes)
}

fn check_name(remote: &str, name: &str) -> Result<(), String> {
    if remote.is_empty()
        || !remote
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err("its name has characters other than letters, digits, _ and -".into());
    }
    if name.chars().count() > MAX_TOOL_NAME_CHARS {
        return Err(format!(
            "{name} is longer than the {MAX_TOOL_NAME_CHARS} characters model APIs accept"
        ));
    }
    Ok(())
}

/// The input schema as the model gets it: an object schema of bounded size.
fn parameters(
    schema: &serde_json::Map<String, serde_json::Value>,
) -> Result<serde_json::Value, String> {
    let mut schema = schema.clone();
    match schema.get("type") {
        None => {
            schema.insert("type".into(), serde_json::Value::from("object"));
        }
        Some(serde_json::Value::String(t)) if t == "object" => {}
        Some(other) => {
            return Err(format!(
                "its input schema is of type {other}, not an object"
            ));
        }
    }
    let schema = serde_json::Value::Object(schema);
    let size = schema.to_string().len();
    if size > MAX_SCHEMA_BYTES {
        return Err(format!(
            "its input schema is {size} bytes, more than the {MAX_SCHEMA_BYTES} accepted"
        ));
    }
    Ok(schema)
}

fn description(given: Option<&str>, server: &str) -> String {
    let given = given.unwrap_or("").trim();
    let mut end = given.len().min(MAX_DESCRIPTION_BYTES);
    while !given.is_char_boundary(end) {
        end -= 1;
    }
    if given.is_empty() {
        format!("A tool of the MCP server `{server}`.")
    } else {
        format!("{} (MCP server `{server}`)", &given[..end])
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> serde_json::Value {
        self.parameters.clone()
    }

    fn call<'a>(&'a self, arguments: serde_json::Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let serde_json::Value::Object(arguments) = arguments else {
                return Err(ToolError::InvalidArguments(
                    "the arguments must be a JSON object".into(),
                ));
            };
            let server = &self.server;
            if let Some(ended) = server.ended() {
                return Err(ToolError::Failed(gone(server, &ended)));
            }
            let mut params = CallToolRequestParams::new(self.remote.clone());
            params.arguments = Some(arguments);
            let answer = tokio::time::timeout(server.tool_timeout, server.peer.call_tool(params));
            match answer.await {
                Ok(Ok(result)) => {
                    let text = server.mask(&content::as_text(&result));
                    if result.is_error == Some(true) {
                        Err(ToolError::Failed(text))
                    } else {
                        Ok(ToolOutput::text(text))
                    }
                }
                Ok(Err(e)) => Err(ToolError::Failed(
                    match server.ended_within(EXIT_SEEN_WITHIN).await {
                        Some(ended) => gone(server, &ended),
                        None => server.mask(&format!(
                            "the MCP server `{}` failed the call: {e}",
                            server.name
                        )),
                    },
                )),
                Err(_) => Err(ToolError::Failed(format!(
                    "the MCP server `{}` did not answer within {} s (its tool_timeout_sec); the \
                     call was abandoned; try smaller work, or ask the operator for a longer \
                     tool_timeout_sec",
                    server.name,
                    server.tool_timeout.as_secs_f64()
                ))),
            }
        })
    }

    fn deadline(&self, _ctx: &ToolContext) -> Duration {
        self.server.tool_timeout + DEADLINE_MARGIN
    }
}

fn gone(server: &RunningServer, ended: &super::server::Ended) -> String {
    let text = with_stderr(
        format!(
            "the MCP server `{}` has exited ({}); its tools cannot be called for the rest of \
             this run",
            server.name, ended.how
        ),
        ended,
        &[],
    );
    server.mask(&text)
}
