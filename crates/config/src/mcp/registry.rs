//! The MCP servers a supervisor knows: the user config's, then a trusted
//! project's `.mcp.json`, then its `.subagent/config.toml` (a later file's
//! server replaces an earlier one of the same name as a whole, as a
//! `[providers.NAME]` does), and the variables no server may be given
//! (the providers' key variables).
//!
//! A lookup table; it resolves nothing (`resolve.rs`) and reads no file.

use std::collections::BTreeMap;

use super::entry::McpServerEntry;

/// The configured servers by name, and the provider key variables.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpRegistry {
    servers: BTreeMap<String, McpServerEntry>,
    protected_vars: Vec<String>,
}

impl McpRegistry {
    /// Adds `entries`, each replacing a server of the same name; call it
    /// lowest precedence first.
    pub fn add_layer(&mut self, entries: impl IntoIterator<Item = McpServerEntry>) {
        for entry in entries {
            self.servers.insert(entry.name.clone(), entry);
        }
    }

    /// Names `var` as a provider's key variable: no server gets it.
    pub fn protect_variable(&mut self, var: &str) {
        if !self.protected_vars.iter().any(|v| v == var) {
            self.protected_vars.push(var.to_owned());
        }
    }

    /// The provider key variables no server may be given.
    pub fn protected_variables(&self) -> &[String] {
        &self.protected_vars
    }

    /// The server called `name`, enabled or not.
    pub fn get(&self, name: &str) -> Option<&McpServerEntry> {
        self.servers.get(name)
    }

    /// Every configured server, by name.
    pub fn entries(&self) -> impl Iterator<Item = &McpServerEntry> {
        self.servers.values()
    }

    /// True when no server is configured.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The refusal for a run that names a server `name` that is not
    /// configured or not enabled (`extra`: servers only the run's agent
    /// defines), listing what is there and where to configure one.
    pub fn unknown_message(&self, name: &str, extra: &[&McpServerEntry]) -> String {
        let mut names: Vec<&str> = self
            .servers
            .values()
            .chain(extra.iter().copied())
            .filter(|e| e.enabled)
            .map(|e| e.name.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        let listed = if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        };
        let disabled = self
            .servers
            .get(name)
            .filter(|e| !e.enabled)
            .map(|e| {
                format!(
                    " (`{name}` is configured in {} with `enabled = false`; set it to true to use it)",
                    e.source.display()
                )
            })
            .unwrap_or_default();
        format!(
            "no MCP server named `{name}` is configured{disabled}; configured: {listed}; add \
             [mcp_servers.{name}] with `command = \"...\"` to ~/.config/subagent/config.toml, or \
             to a trusted project's .subagent/config.toml or .mcp.json (`subagent config show` \
             lists them)"
        )
    }
}
