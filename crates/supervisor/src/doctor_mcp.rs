//! `subagent doctor`'s look at the configured MCP servers: each one with
//! the file that defines it and its command, and whether that command is
//! an executable program on the supervisor's `PATH`. A missing one is a
//! warning naming the server and what to install, not a failure: only
//! runs that select the server need it. It starts no server.

use super::Probe;
use crate::config::EnvLookup;
use crate::mcp::{McpRegistry, find_program};

/// One probe per configured server.
pub fn mcp_server_probes(registry: &McpRegistry, env: EnvLookup<'_>) -> Vec<Probe> {
    registry
        .entries()
        .map(|entry| {
            let name = format!("mcp server {}", entry.name);
            let source = entry.source.display();
            if !entry.enabled {
                return Probe::ok(&name, format!("{source}: disabled (`enabled = false`)"));
            }
            // `${VAR}` in a command is only known at a run: reported as written.
            if entry.expands && entry.command.contains("${") {
                return Probe::ok(
                    &name,
                    format!("{source}: {} (expanded per run)", entry.command),
                );
            }
            match find_program(&entry.command, env) {
                Ok(program) => Probe::ok(
                    &name,
                    format!("{source}: {} ({})", entry.command, program.display()),
                ),
                Err(why) => Probe::warning(
                    &name,
                    format!("{source}: its command `{}` {why}", entry.command),
                    format!(
                        "install the server's package (e.g. `uv tool install` or `npm install -g` \
                         it) so `{}` is on PATH, or write its absolute path in `command`",
                        entry.command
                    ),
                ),
            }
        })
        .collect()
}
