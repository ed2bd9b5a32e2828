//! `McpServerSpec`: one MCP server a run uses, as the supervisor resolved it
//! from the operator's configuration (protocol 9). Wire type, sent inside
//! [`crate::TaskSpec`].
//!
//! The supervisor does all the deciding (which servers the run selected,
//! under the ceilings; which of their tools; the program's absolute path;
//! the environment's values); the worker only starts what it is given, in
//! the tool sandbox, and offers the tools to the model as
//! `mcp__SERVER__TOOL`. This module holds no policy.

use serde::{Deserialize, Serialize};

use crate::api_key::ApiKey;

/// Prefix of every MCP tool name a model sees: `mcp__SERVER__TOOL`, as
/// Claude Code names them.
pub const MCP_TOOL_PREFIX: &str = "mcp__";

/// Separator between the server's name and the tool's.
pub const MCP_NAME_SEPARATOR: &str = "__";

/// One MCP server of a run: a program speaking MCP over its stdin and stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpServerSpec {
    /// The server's name, from the configuration (`[mcp_servers.NAME]`,
    /// `.mcp.json`'s key): letters, digits, `_` and `-`.
    pub name: String,
    /// The program, by absolute path (the supervisor resolved it on its
    /// own `PATH`, outside any workspace).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables set for it besides the tool sandbox's own (`PATH`,
    /// `LANG`, `HOME`, `TMPDIR`), values resolved by the supervisor. The
    /// values may be secrets: they travel like the model's key and are
    /// masked in what the server returns.
    pub env: Vec<McpEnvVar>,
    /// Directories the server reads and executes from besides the system
    /// ones (its installation: a venv, a `node_modules`), read-only.
    pub read_only: Vec<String>,
    /// How long it may take to start and list its tools, ms.
    pub startup_timeout_ms: u64,
    /// How long one call of its tools may take, ms.
    pub tool_timeout_ms: u64,
    /// Which of its tools the run offers.
    pub tools: McpToolSelection,
}

/// One environment variable of an MCP server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpEnvVar {
    /// Its name.
    pub name: String,
    /// Its value (masked in human-readable serializations).
    pub value: ApiKey,
}

/// Which tools of a server a run offers to the model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpToolSelection {
    /// Only these (the server's own tool names); `None`: every tool the
    /// server lists, less `disabled`.
    pub only: Option<Vec<String>>,
    /// Never these.
    pub disabled: Vec<String>,
}

impl McpToolSelection {
    /// True when the tool the server calls `tool` is offered.
    pub fn offers(&self, tool: &str) -> bool {
        !self.disabled.iter().any(|d| d == tool)
            && self
                .only
                .as_ref()
                .is_none_or(|only| only.iter().any(|o| o == tool))
    }
}

/// The name a model calls `tool` of `server` by: `mcp__SERVER__TOOL`.
pub fn mcp_tool_name(server: &str, tool: &str) -> String {
    format!("{MCP_TOOL_PREFIX}{server}{MCP_NAME_SEPARATOR}{tool}")
}

/// The server and tool a `mcp__SERVER` or `mcp__SERVER__TOOL` name names;
/// `None` when `name` is not an MCP name. A server's name holds no `__`, so
/// the first `__` after the prefix ends it.
pub fn parse_mcp_name(name: &str) -> Option<(&str, Option<&str>)> {
    let rest = name.strip_prefix(MCP_TOOL_PREFIX)?;
    match rest.split_once(MCP_NAME_SEPARATOR) {
        Some((server, tool)) if !server.is_empty() && !tool.is_empty() => {
            Some((server, Some(tool)))
        }
        Some(_) => None,
        None if !rest.is_empty() => Some((rest, None)),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_at_the_first_separator_after_the_prefix() {
        assert_eq!(parse_mcp_name("mcp__time"), Some(("time", None)));
        assert_eq!(
            parse_mcp_name("mcp__time__get_current_time"),
            Some(("time", Some("get_current_time")))
        );
        assert_eq!(
            parse_mcp_name("mcp__fs__read__file"),
            Some(("fs", Some("read__file")))
        );
        for not_mcp in ["mcp__", "mcp____x", "mcp__x__", "bash", "mcp_x"] {
            assert_eq!(parse_mcp_name(not_mcp), None, "{not_mcp}");
        }
        assert_eq!(
            mcp_tool_name("context7", "resolve-library-id"),
            "mcp__context7__resolve-library-id"
        );
    }

    #[test]
    fn a_selection_offers_what_only_names_less_what_is_disabled() {
        let all = McpToolSelection::default();
        assert!(all.offers("a"));
        let some = McpToolSelection {
            only: Some(vec!["a".into(), "b".into()]),
            disabled: vec!["b".into()],
        };
        assert!(some.offers("a"));
        assert!(!some.offers("b"));
        assert!(!some.offers("c"));
    }
}
