//! One configured MCP server, whichever file defined it, and the rule for
//! its name.
//!
//! Plain data: both shapes (`toml_shape.rs`, `json_shape.rs`) parse into
//! it and `resolve.rs` turns it into what a run sends. Nothing here reads
//! the environment or the disk.

use std::path::PathBuf;

/// How long a server may take to start and list its tools when its entry
/// says nothing (Codex's default, 10 s).
pub const DEFAULT_STARTUP_TIMEOUT_MS: u64 = 10_000;

/// How long one tool call may take when the entry says nothing (Codex's
/// default, 60 s).
pub const DEFAULT_TOOL_TIMEOUT_MS: u64 = 60_000;

/// Where one environment variable's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvValue {
    /// Written in the file (Codex's `env` table).
    Literal(String),
    /// The supervisor's own variable of the same name (Codex's `env_vars`).
    Passthrough,
    /// Text with `${VAR}` / `${VAR:-default}` in it, expanded from the
    /// supervisor's environment (Claude Code's `.mcp.json`).
    Expand(String),
}

/// One MCP server as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerEntry {
    /// Its name: `[A-Za-z0-9_-]+`, no `__`.
    pub name: String,
    /// The file that defines it.
    pub source: PathBuf,
    /// The program as written: a name looked up on `PATH`, or an absolute
    /// path. In Claude Code's shape it may hold `${VAR}`.
    pub command: String,
    /// Its arguments (Claude Code's shape: may hold `${VAR}`).
    pub args: Vec<String>,
    /// Whether `command` and `args` hold `${VAR}` to expand (Claude Code's
    /// shape; Codex's takes them literally).
    pub expands: bool,
    /// Its variables, in the order written.
    pub env: Vec<(String, EnvValue)>,
    /// Extra directories it reads from (`read_only`, ours).
    pub read_only: Vec<PathBuf>,
    /// Start and list its tools within this, ms.
    pub startup_timeout_ms: u64,
    /// One call within this, ms.
    pub tool_timeout_ms: u64,
    /// `enabled = false`: configured, but no run may select it.
    pub enabled: bool,
    /// `enabled_tools`: only these of its tools are ever offered.
    pub enabled_tools: Option<Vec<String>>,
    /// `disabled_tools`: these are never offered.
    pub disabled_tools: Vec<String>,
}

impl McpServerEntry {
    /// An entry with the defaults: enabled, no variables, Codex's timeouts.
    pub fn new(name: &str, source: PathBuf, command: String, args: Vec<String>) -> Self {
        Self {
            name: name.to_owned(),
            source,
            command,
            args,
            expands: false,
            env: Vec::new(),
            read_only: Vec::new(),
            startup_timeout_ms: DEFAULT_STARTUP_TIMEOUT_MS,
            tool_timeout_ms: DEFAULT_TOOL_TIMEOUT_MS,
            enabled: true,
            enabled_tools: None,
            disabled_tools: Vec::new(),
        }
    }
}

/// Checks a server's name: letters, digits, `_` and `-`, and no `__`,
/// which separates it from the tool's name in `mcp__NAME__TOOL`. The error
/// states the rule (the caller names the file).
pub fn check_server_name(name: &str) -> Result<(), String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if name.is_empty() || !name.chars().all(allowed) {
        return Err(format!(
            "MCP server name `{name}`: use letters, digits, `_` and `-` only (it becomes part of \
             the tool names `mcp__{name}__TOOL`)"
        ));
    }
    if name.contains("__") {
        return Err(format!(
            "MCP server name `{name}`: it may not hold `__`, which separates the server from the \
             tool in `mcp__SERVER__TOOL`; use a single `_` or `-`"
        ));
    }
    Ok(())
}

/// Checks an environment variable's name: `[A-Za-z_][A-Za-z0-9_]*`.
pub(super) fn check_env_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(())
    } else {
        Err(format!(
            "`{name}` is not a variable name (letters, digits and `_`, not starting with a digit)"
        ))
    }
}
