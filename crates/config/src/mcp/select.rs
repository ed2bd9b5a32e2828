//! Which MCP servers a run selected, from its tool names as Claude Code
//! writes them: `mcp__NAME` (every tool of the server, within its entry's
//! lists) or `mcp__NAME__TOOL` (that tool). The names stay out of the
//! run's built-in tool list; the servers go into
//! [`subagent_protocol::TaskSpec::mcp_servers`].
//!
//! Also the ceilings' rule for these names ([`mcp_covered`]): a caller
//! may ask for a server's tool when the ceiling has that tool or the whole
//! server. Pure but for the program look-ups of `resolve.rs`.

use std::collections::BTreeMap;

use subagent_protocol::McpServerSpec;
use subagent_protocol::mcp_server::parse_mcp_name;

use super::entry::McpServerEntry;
use super::registry::McpRegistry;
use super::resolve::{RunSide, resolve_server};

/// The servers a tool list names: each with `None` (all its tools) or
/// the tools named.
pub type McpSelection = BTreeMap<String, Option<Vec<String>>>;

/// True when `name` is an MCP tool name (`mcp__NAME` or `mcp__NAME__TOOL`).
pub fn is_mcp_name(name: &str) -> bool {
    parse_mcp_name(name).is_some()
}

/// `tools` split into the built-in names and the MCP selection.
pub fn split_mcp_tools(tools: &[String]) -> (Vec<String>, McpSelection) {
    let mut builtins = Vec::new();
    let mut selection = McpSelection::new();
    for name in tools {
        match parse_mcp_name(name) {
            None => builtins.push(name.clone()),
            Some((server, None)) => {
                selection.insert(server.to_owned(), None);
            }
            Some((server, Some(tool))) => {
                let slot = selection
                    .entry(server.to_owned())
                    .or_insert_with(|| Some(Vec::new()));
                if let Some(tools) = slot
                    && !tools.iter().any(|t| t == tool)
                {
                    tools.push(tool.to_owned());
                }
            }
        }
    }
    (builtins, selection)
}

/// True when a ceiling whose tools are `ceiling` allows the MCP name
/// `name`: it lists that name, or the whole server of a `mcp__NAME__TOOL`.
pub fn mcp_covered(ceiling: &[String], name: &str) -> bool {
    if ceiling.iter().any(|c| c == name) {
        return true;
    }
    match parse_mcp_name(name) {
        Some((server, Some(_))) => ceiling
            .iter()
            .any(|c| parse_mcp_name(c) == Some((server, None))),
        _ => false,
    }
}

/// The servers `tools` select, resolved for `run`: looked up among the
/// run's agent's own (`agent_servers`) and then the configured ones
/// (`registry`), enabled ones only. A server found in neither is refused
/// when the caller named the tools (`strict`), and left out when they came
/// with the agent's file (`agents ls --warnings` names it). The error is
/// the refusal's text.
pub fn servers_for_run(
    tools: &[String],
    strict: bool,
    registry: &McpRegistry,
    agent_servers: &[McpServerEntry],
    run: &RunSide<'_>,
) -> Result<Vec<McpServerSpec>, String> {
    let (_, selection) = split_mcp_tools(tools);
    let mut specs = Vec::with_capacity(selection.len());
    for (server, only) in &selection {
        let entry = agent_servers
            .iter()
            .find(|e| e.name == *server)
            .or_else(|| registry.get(server))
            .filter(|e| e.enabled);
        let Some(entry) = entry else {
            if strict {
                let extra: Vec<&McpServerEntry> = agent_servers.iter().collect();
                return Err(registry.unknown_message(server, &extra));
            }
            continue;
        };
        specs.push(resolve_server(entry, only.as_deref(), run).map_err(|e| e.to_string())?);
    }
    Ok(specs)
}
