//! Claude Code's shape of an MCP server, in a project's `.mcp.json` and in
//! an agent file's `mcpServers` entries:
//!
//! ```json
//! {"mcpServers": {
//!   "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"],
//!            "env": {"TZ": "UTC", "TOKEN": "${GITHUB_TOKEN}", "MODE": "${MODE:-fast}"}}
//! }}
//! ```
//!
//! `type` is optional (stdio). An `http` or `sse` server is skipped with a
//! warning: only stdio servers are started here. Other keys Claude Code
//! knows (`headers`, `oauth`, ...) are ignored with a warning, never an
//! error, since the same file must keep working in Claude Code. `${VAR}`
//! in `command`, `args` and `env` is expanded when a run resolves the
//! server (`resolve.rs`), from the supervisor's environment. It reads
//! nothing but the text it is given.

use std::path::Path;

use serde_json::Value;

use super::entry::{EnvValue, McpServerEntry, check_env_name, check_server_name};

/// The servers of a `.mcp.json` (`source`, its `text`), with a warning line
/// for each one skipped or key ignored. An error names the file.
pub fn parse_mcp_json(
    source: &Path,
    text: &str,
) -> Result<(Vec<McpServerEntry>, Vec<String>), String> {
    let file = source.display();
    let root: Value = serde_json::from_str(text).map_err(|e| {
        format!("{file}:{}: not valid JSON: {e}; Claude Code's shape is {{\"mcpServers\": {{\"NAME\": {{\"command\": \"...\"}}}}}}", e.line())
    })?;
    let Value::Object(root) = root else {
        return Err(format!("{file}: expected an object with `mcpServers`"));
    };
    let mut entries = Vec::new();
    let mut warnings = Vec::new();
    let servers = match root.get("mcpServers") {
        None | Some(Value::Null) => return Ok((entries, warnings)),
        Some(Value::Object(servers)) => servers,
        Some(_) => {
            return Err(format!(
                "{file}: `mcpServers` must be an object of servers by name"
            ));
        }
    };
    for (name, value) in servers {
        if let Some(entry) = parse_inline_server(source, name, value, &mut warnings)? {
            entries.push(entry);
        }
    }
    Ok((entries, warnings))
}

/// One server in Claude Code's shape, `name` defined by `value` in the
/// file `source`; `None` when it is skipped (an HTTP server), with a
/// warning. The error names the file and the server.
pub fn parse_inline_server(
    source: &Path,
    name: &str,
    value: &Value,
    warnings: &mut Vec<String>,
) -> Result<Option<McpServerEntry>, String> {
    let file = source.display();
    check_server_name(name).map_err(|m| format!("{file}: {m}"))?;
    let at = |key: &str| format!("{file}: MCP server `{name}`, `{key}`");
    let Value::Object(fields) = value else {
        return Err(format!(
            "{file}: MCP server `{name}`: expected an object such as {{\"command\": \"uvx\", \"args\": [\"mcp-server-time\"]}}"
        ));
    };
    match fields.get("type") {
        None | Some(Value::Null) => {}
        Some(Value::String(t)) if t == "stdio" => {}
        Some(Value::String(t)) if t == "http" || t == "sse" || t == "streamable-http" => {
            warnings.push(format!(
                "warning: {file}: MCP server `{name}` is skipped: it is an `{t}` server, and only \
                 stdio servers (`command`) are started here"
            ));
            return Ok(None);
        }
        Some(other) => {
            return Err(format!(
                "{}: `{other}` is not a server type; use \"stdio\"",
                at("type")
            ));
        }
    }
    for key in fields.keys() {
        if !KNOWN_KEYS.contains(&key.as_str()) {
            warnings.push(format!(
                "warning: {file}: MCP server `{name}`: `{key}` is ignored (only stdio servers' \
                 `command`, `args` and `env` are used here)"
            ));
        }
    }
    let command = match fields.get("command") {
        Some(Value::String(c)) if !c.trim().is_empty() => c.trim().to_owned(),
        None if fields.contains_key("url") => {
            warnings.push(format!(
                "warning: {file}: MCP server `{name}` is skipped: it has a `url` and no \
                 `command`, and only stdio servers are started here"
            ));
            return Ok(None);
        }
        _ => {
            return Err(format!(
                "{}: missing or not text; name the server's program, e.g. \"command\": \"npx\"",
                at("command")
            ));
        }
    };
    let args = match fields.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                _ => Err(format!("{}: expected a list of strings", at("args"))),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(format!("{}: expected a list of strings", at("args"))),
    };
    let mut entry = McpServerEntry::new(name, source.to_owned(), command, args);
    entry.expands = true;
    match fields.get("env") {
        None | Some(Value::Null) => {}
        Some(Value::Object(env)) => {
            for (var, value) in env {
                check_env_name(var).map_err(|m| format!("{}: {m}", at("env")))?;
                let text = match value {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => return Err(format!("{}.{var}: expected text", at("env"))),
                };
                entry.env.push((var.clone(), EnvValue::Expand(text)));
            }
        }
        Some(_) => return Err(format!("{}: expected an object of variables", at("env"))),
    }
    Ok(Some(entry))
}

/// The keys of a server used here (`type` is checked above).
const KNOWN_KEYS: &[&str] = &["type", "command", "args", "env"];
