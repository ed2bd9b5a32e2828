//! The tool-subset check made at admission, before any process starts.
//!
//! A subset (from the caller or from an agent definition) may name only the
//! tools the worker ships, [`BUILTIN_TOOLS`], written down in the protocol
//! crate so the supervisor can check names without linking the tools (the
//! worker's registry test pins that list to what the registry offers), and
//! [`SUBAGENT_TOOL`], the supervisor's own, which admission takes away from
//! a child at the depth limit. The
//! check runs here and not only in the worker so a typo costs no process,
//! no session file and no model call, and the caller reads the whole list of
//! known tools in the refusal.
//!
//! `report_back` is not a tool to choose: the worker adds it, with the
//! parent's schema as its parameters, exactly when an output schema is given.
//! Naming it is refused with that advice rather than ignored, so a caller who
//! wanted structured output learns how to ask for it.

use std::fmt;

use subagent_protocol::tool_names::BUILTIN_TOOLS;
use subagent_report_back::REPORT_BACK_TOOL_NAME;

/// The tool name through which a child could spawn its own subagents.
pub(in crate::run) const SUBAGENT_TOOL: &str = subagent_protocol::tool_names::SUBAGENT;

/// Every name a subset may use, in the order the refusal lists them.
fn known_tools() -> impl Iterator<Item = &'static str> {
    BUILTIN_TOOLS.iter().copied().chain([SUBAGENT_TOOL])
}

/// Where a checked subset came from, for the refusal message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::run) enum SubsetOrigin {
    /// The caller chose it (`--tools`, `RunRequest::tools`).
    Requested,
    /// The definition of the named agent lists it.
    Agent(String),
}

impl fmt::Display for SubsetOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubsetOrigin::Requested => f.write_str("the requested tools"),
            SubsetOrigin::Agent(name) => write!(f, "the tool list of agent `{name}`"),
        }
    }
}

/// A subset names tools that cannot be chosen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub(in crate::run) struct ToolSubsetError {
    /// Where the subset came from.
    pub origin: SubsetOrigin,
    /// Names that are no built-in tool, in the order given, without repeats.
    pub unknown: Vec<String>,
    /// Whether `report_back` was named.
    pub report_back: bool,
}

impl ToolSubsetError {
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.unknown.is_empty() {
            parts.push(format!(
                "unknown tool{} {} in {}; known tools: {}",
                if self.unknown.len() == 1 { "" } else { "s" },
                quoted(self.unknown.iter().map(String::as_str)),
                self.origin,
                quoted(known_tools()),
            ));
        }
        if self.report_back {
            parts.push(format!(
                "`{REPORT_BACK_TOOL_NAME}` in {} cannot be chosen as a tool: it is added when \
                 an output schema is given, so pass --output-schema FILE (output_schema_json) instead",
                self.origin,
            ));
        }
        parts.join("; ")
    }
}

fn quoted<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Accepts `names` when every one is a known tool; repeats are fine and an
/// empty subset means "no tools".
pub(in crate::run) fn check_tool_subset(
    names: &[String],
    origin: SubsetOrigin,
) -> Result<(), ToolSubsetError> {
    let mut unknown: Vec<String> = Vec::new();
    let mut report_back = false;
    for name in names {
        if name == REPORT_BACK_TOOL_NAME {
            report_back = true;
        } else if !known_tools().any(|known| known == name)
            // An MCP name's server is checked against the configuration
            // (`spec::mcp_servers`), whose refusal lists the servers.
            && !crate::mcp::is_mcp_name(name)
            && !unknown.contains(name)
        {
            unknown.push(name.clone());
        }
    }
    if unknown.is_empty() && !report_back {
        Ok(())
    } else {
        Err(ToolSubsetError {
            origin,
            unknown,
            report_back,
        })
    }
}

#[cfg(test)]
#[path = "tool_subset_tests.rs"]
mod tests;
