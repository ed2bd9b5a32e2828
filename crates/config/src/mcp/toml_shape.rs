//! `[mcp_servers.NAME]` of a config.toml, in Codex's shape:
//!
//! ```toml
//! [mcp_servers.time]
//! command = "uvx"                   # a name on PATH, or an absolute path
//! args = ["mcp-server-time"]
//! env = { TZ = "UTC" }              # literal values
//! env_vars = ["GITHUB_TOKEN"]       # passed through from the supervisor's environment
//! startup_timeout_sec = 10          # or startup_timeout_ms
//! tool_timeout_sec = 60
//! enabled = true
//! enabled_tools = ["get_current_time"]
//! disabled_tools = ["convert_time"]
//! read_only = ["/opt/models"]       # ours: more directories it reads
//! ```
//!
//! A key this runtime does not know is an error naming it, as everywhere in
//! config.toml. Codex's keys for what only Codex does (HTTP servers, a
//! working directory, OAuth) are ignored with one warning each, so the
//! same table works in both; a server with a `url` and no `command` is
//! skipped with a warning. It reads nothing but the value it is given.

use std::path::{Path, PathBuf};

use toml::Value;

use super::entry::{EnvValue, McpServerEntry, check_env_name, check_server_name};

/// Codex keys that are accepted and ignored, with why.
const IGNORED_KEYS: &[(&str, &str)] = &[
    (
        "url",
        "only stdio servers are started here (a program the run starts in its sandbox)",
    ),
    (
        "bearer_token_env_var",
        "only stdio servers are started here, and they take no bearer token",
    ),
    ("http_headers", "only stdio servers are started here"),
    ("env_http_headers", "only stdio servers are started here"),
    ("oauth_resource", "only stdio servers are started here"),
    ("scopes", "only stdio servers are started here"),
    (
        "cwd",
        "a server runs in the run's workspace, as its tools do",
    ),
    (
        "required",
        "a server that fails gives tool errors, not a failed run",
    ),
];

/// A `[mcp_servers]` entry that cannot be used: the server, the key (for
/// the line), and what is wrong and what to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TomlServersError {
    /// The server's name as written.
    pub server: String,
    /// The key at fault; `None` for the table itself.
    pub key: Option<String>,
    /// What is wrong, starting with `mcp_servers.NAME...`.
    pub message: String,
}

/// The servers of `table` (`[mcp_servers]` of the file `source`), with a
/// warning line for each ignored key or skipped server.
pub fn parse_toml_servers(
    source: &Path,
    table: &toml::Table,
) -> Result<(Vec<McpServerEntry>, Vec<String>), TomlServersError> {
    let mut entries = Vec::new();
    let mut warnings = Vec::new();
    for (name, value) in table {
        let fail = |key: Option<&str>, message: String| TomlServersError {
            server: name.clone(),
            key: key.map(str::to_owned),
            message,
        };
        check_server_name(name).map_err(|m| fail(None, format!("mcp_servers.{name}: {m}")))?;
        let Value::Table(fields) = value else {
            return Err(fail(
                None,
                format!(
                    "mcp_servers.{name}: expected a table such as `[mcp_servers.{name}]` with `command = \"...\"`"
                ),
            ));
        };
        if let Some(entry) = parse_server(source, name, fields, &mut warnings)
            .map_err(|(key, message)| fail(Some(key).filter(|k| !k.is_empty()), message))?
        {
            entries.push(entry);
        }
    }
    Ok((entries, warnings))
}

/// One server's table; `None` when it is skipped (an HTTP server).
fn parse_server(
    source: &Path,
    name: &str,
    fields: &toml::Table,
    warnings: &mut Vec<String>,
) -> Result<Option<McpServerEntry>, (&'static str, String)> {
    let at = |key: &str| format!("mcp_servers.{name}.{key}");
    for (key, _) in fields {
        if KNOWN_KEYS.contains(&key.as_str()) {
            continue;
        }
        if let Some((_, why)) = IGNORED_KEYS.iter().find(|(k, _)| k == key) {
            warnings.push(format!(
                "warning: {}: {} is ignored: {why}",
                source.display(),
                at(key)
            ));
            continue;
        }
        // No key to point at but the table's header.
        return Err((
            "",
            format!(
                "{}: unknown key; the keys are {}",
                at(key),
                KNOWN_KEYS.join(", ")
            ),
        ));
    }
    let Some(command) = fields.get("command") else {
        if fields.contains_key("url") {
            warnings.push(format!(
                "warning: {}: MCP server `{name}` is skipped: it is an HTTP server (`url`), and \
                 only stdio servers (`command = \"...\"`) are started here",
                source.display()
            ));
            return Ok(None);
        }
        return Err((
            "command",
            format!(
                "{}: missing; name the server's program, e.g. `command = \"uvx\"` with \
                 `args = [\"mcp-server-time\"]`",
                at("command")
            ),
        ));
    };
    let command = match command {
        Value::String(s) if !s.trim().is_empty() => s.trim().to_owned(),
        _ => {
            return Err((
                "command",
                format!("{}: expected the program's name or path", at("command")),
            ));
        }
    };
    let args = strings(fields, "args").map_err(|m| ("args", format!("{}: {m}", at("args"))))?;
    let mut entry = McpServerEntry::new(name, source.to_owned(), command, args.unwrap_or_default());
    if let Some(env) = fields.get("env") {
        let Value::Table(env) = env else {
            return Err((
                "env",
                format!(
                    "{}: expected a table such as `env = {{ TZ = \"UTC\" }}`",
                    at("env")
                ),
            ));
        };
        for (var, value) in env {
            check_env_name(var).map_err(|m| ("env", format!("{}: {m}", at("env"))))?;
            let Value::String(value) = value else {
                return Err((
                    "env",
                    format!(
                        "{}.{var}: expected text; to pass the supervisor's own variable, list \
                         its name in `env_vars`",
                        at("env")
                    ),
                ));
            };
            entry
                .env
                .push((var.clone(), EnvValue::Literal(value.clone())));
        }
    }
    for var in strings(fields, "env_vars")
        .map_err(|m| ("env_vars", format!("{}: {m}", at("env_vars"))))?
        .unwrap_or_default()
    {
        check_env_name(&var).map_err(|m| ("env_vars", format!("{}: {m}", at("env_vars"))))?;
        entry.env.retain(|(v, _)| *v != var);
        entry.env.push((var, EnvValue::Passthrough));
    }
    if let Some(ms) = timeout(fields, "startup_timeout_sec", "startup_timeout_ms")
        .map_err(|(key, m)| (key, format!("{}: {m}", at(key))))?
    {
        entry.startup_timeout_ms = ms;
    }
    if let Some(ms) = timeout(fields, "tool_timeout_sec", "tool_timeout_ms")
        .map_err(|(key, m)| (key, format!("{}: {m}", at(key))))?
    {
        entry.tool_timeout_ms = ms;
    }
    match fields.get("enabled") {
        None => {}
        Some(Value::Boolean(b)) => entry.enabled = *b,
        Some(_) => {
            return Err((
                "enabled",
                format!("{}: expected true or false", at("enabled")),
            ));
        }
    }
    entry.enabled_tools = strings(fields, "enabled_tools")
        .map_err(|m| ("enabled_tools", format!("{}: {m}", at("enabled_tools"))))?;
    entry.disabled_tools = strings(fields, "disabled_tools")
        .map_err(|m| ("disabled_tools", format!("{}: {m}", at("disabled_tools"))))?
        .unwrap_or_default();
    for dir in strings(fields, "read_only")
        .map_err(|m| ("read_only", format!("{}: {m}", at("read_only"))))?
        .unwrap_or_default()
    {
        let path = PathBuf::from(&dir);
        if !path.is_absolute() {
            return Err((
                "read_only",
                format!(
                    "{}: `{dir}` is not an absolute path; write the directory's full path",
                    at("read_only")
                ),
            ));
        }
        entry.read_only.push(path);
    }
    Ok(Some(entry))
}

/// The keys of `[mcp_servers.NAME]` this runtime uses.
const KNOWN_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "env_vars",
    "startup_timeout_sec",
    "startup_timeout_ms",
    "tool_timeout_sec",
    "tool_timeout_ms",
    "enabled",
    "enabled_tools",
    "disabled_tools",
    "read_only",
];

/// A list of strings at `key`, if present.
fn strings(fields: &toml::Table, key: &str) -> Result<Option<Vec<String>>, String> {
    match fields.get(key) {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(s.clone()),
                _ => Err("expected a list of strings".to_owned()),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err("expected a list of strings such as [\"a\", \"b\"]".to_owned()),
    }
}

/// The longest timeout accepted: a day, far past any server's start.
const MAX_TIMEOUT_MS: f64 = 86_400_000.0;

/// A timeout given in seconds (`sec_key`, Codex's) or ms (`ms_key`), in ms.
fn timeout(
    fields: &toml::Table,
    sec_key: &'static str,
    ms_key: &'static str,
) -> Result<Option<u64>, (&'static str, String)> {
    let (key, factor) = match (fields.get(sec_key), fields.get(ms_key)) {
        (Some(_), Some(_)) => {
            return Err((ms_key, format!("give {sec_key} or {ms_key}, not both")));
        }
        (Some(v), None) => ((sec_key, v), 1000.0),
        (None, Some(v)) => ((ms_key, v), 1.0),
        (None, None) => return Ok(None),
    };
    let (name, value) = key;
    let number = match value {
        Value::Integer(n) => *n as f64,
        Value::Float(x) => *x,
        _ => return Err((name, "expected a number".to_owned())),
    };
    let ms = number * factor;
    if !ms.is_finite() || !(1.0..=MAX_TIMEOUT_MS).contains(&ms) {
        return Err((
            name,
            format!("`{number}` is out of range; use more than 0 and at most a day"),
        ));
    }
    // In range: the cast cannot truncate but the fraction of a ms.
    Ok(Some(ms.round() as u64))
}
