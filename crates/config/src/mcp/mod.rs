//! MCP servers for subagents, the supervisor's side: the servers the
//! operator configured (`[mcp_servers.NAME]` in config.toml, Codex's shape;
//! a trusted project's `.mcp.json`, Claude Code's shape; an agent file's
//! `mcpServers`), which of them a run selected by its tool names
//! (`mcp__NAME`, `mcp__NAME__TOOL`), and each selected one resolved into
//! the [`subagent_protocol::McpServerSpec`] the worker starts.
//!
//! It parses text it is given and looks programs up on `PATH`; it never
//! reads a config file itself (the loaders do, as untrusted input), never
//! starts a server and never talks MCP: the worker does, in the tool
//! sandbox.

mod entry;
mod install_dirs;
mod interpreter;
mod json_shape;
mod program;
mod registry;
mod resolve;
mod select;
mod toml_shape;

#[cfg(test)]
mod entry_tests;
#[cfg(test)]
mod json_shape_tests;
#[cfg(test)]
mod resolve_tests;
#[cfg(test)]
mod select_tests;
#[cfg(test)]
mod toml_shape_tests;

pub use entry::{
    DEFAULT_STARTUP_TIMEOUT_MS, DEFAULT_TOOL_TIMEOUT_MS, EnvValue, McpServerEntry,
    check_server_name,
};
pub use json_shape::{parse_inline_server, parse_mcp_json};
pub use program::find_program;
pub use registry::McpRegistry;
pub use resolve::{McpResolveError, RunSide, resolve_server};
pub use select::{McpSelection, is_mcp_name, mcp_covered, servers_for_run, split_mcp_tools};
pub use toml_shape::{TomlServersError, parse_toml_servers};
