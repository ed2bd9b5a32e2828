//! The lines a command prints for a catalog's warnings: grouped into one
//! line, or in full for one agent or all ([`WarningDetail`]).
//!
//! Pure: it formats; the caller decides where the lines go.

use super::catalog::AgentCatalog;
use super::warnings::{AgentWarning, LIST_WARNINGS_COMMAND, WarningDetail};

impl AgentCatalog {
    /// The warning lines a command prints on stderr, each starting with
    /// `warning: `: one per unreadable file, then the agents' warnings as
    /// `detail` asks.
    pub fn warning_lines(&self, detail: WarningDetail<'_>) -> Vec<String> {
        let mut lines: Vec<String> = self
            .unreadable()
            .iter()
            .map(|file| format!("warning: agent file skipped: {}", file.reason))
            .collect();
        let full = |name: &str| match detail {
            WarningDetail::Full => true,
            WarningDetail::Grouped { full_for } => full_for == Some(name),
        };
        let (mut files, mut tools, mut aliases, mut patterns, mut servers) = (0, 0, 0, 0, 0);
        let mut full_lines = Vec::new();
        for agent in self.agents().iter().filter(|a| !a.warnings.is_empty()) {
            if full(&agent.name) {
                full_lines.extend(agent.warnings.iter().map(|warning| {
                    format!(
                        "warning: agent {} ({}): {warning}",
                        agent.name, agent.source
                    )
                }));
                continue;
            }
            files += 1;
            for warning in &agent.warnings {
                match warning {
                    AgentWarning::ToolDropped(_) => tools += 1,
                    AgentWarning::ModelAlias(_) => aliases += 1,
                    AgentWarning::PatternNotEnforced(_) => patterns += 1,
                    AgentWarning::McpServer(_) => servers += 1,
                }
            }
        }
        if files > 0 {
            let mut parts = Vec::new();
            if tools > 0 {
                parts.push(format!(
                    "{tools} {} not available here",
                    plural(tools, "tool")
                ));
            }
            if patterns > 0 {
                parts.push(format!(
                    "{patterns} tool {} not enforced",
                    plural(patterns, "pattern")
                ));
            }
            if servers > 0 {
                parts.push(format!(
                    "{servers} MCP {} left out",
                    plural(servers, "server")
                ));
            }
            if aliases > 0 {
                parts.push(format!(
                    "{aliases} Claude Code model {} ignored",
                    plural(aliases, "alias")
                ));
            }
            lines.push(format!(
                "warning: {files} agent {}: {}; `{LIST_WARNINGS_COMMAND}` lists them",
                plural(files, "file"),
                parts.join(", ")
            ));
        }
        lines.extend(full_lines);
        lines
    }
}

fn plural(n: usize, word: &str) -> String {
    match (n, word) {
        (1, _) => word.to_owned(),
        (_, "alias") => "aliases".to_owned(),
        _ => format!("{word}s"),
    }
}
