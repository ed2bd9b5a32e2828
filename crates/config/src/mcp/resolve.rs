//! One configured server resolved for one run into the
//! [`McpServerSpec`] the worker starts: the program by absolute path on
//! the supervisor's `PATH` and outside the workspace, its variables'
//! values, the directories of its installation, its timeouts and the
//! tools the run selected.
//!
//! The rules it holds:
//! - the program is never in the workspace, which the run's model can
//!   write: a server there would be a program the model chose;
//! - no server is given a provider's key: a variable that is a provider's
//!   key variable is refused whether passed through, expanded or named,
//!   and so is any value (or argument) equal to the run's key.
//!
//! It reads the environment through the lookup it is given and looks at
//! the disk only to find and canonicalize programs.

use std::path::{Path, PathBuf};

use subagent_protocol::{ApiKey, McpEnvVar, McpServerSpec, McpToolSelection};

use super::entry::{EnvValue, McpServerEntry};
use super::install_dirs::installation_dirs;
use super::interpreter::script_interpreter;
use super::program::find_program;
use crate::env_lookup::EnvLookup;

/// Keys at least this long are looked for inside values (`Bearer KEY`);
/// a shorter one (a test's, a local server's dummy) only as a whole value,
/// where a substring match would refuse by chance.
const MIN_KEY_TO_SEARCH: usize = 8;

/// What a server's resolution needs to know of the run.
pub struct RunSide<'a> {
    /// The run's workspace.
    pub workspace: &'a Path,
    /// The run's provider key, when it has one.
    pub provider_key: Option<&'a str>,
    /// The provider key variables no server may be given.
    pub protected_vars: &'a [String],
    /// The supervisor's environment.
    pub env: EnvLookup<'a>,
}

/// Why a selected server cannot be given to a run; each says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpResolveError {
    /// A variable that is a provider's key variable.
    #[error(
        "MCP server `{server}` ({file}) would be given {var}, a provider's API key variable: \
         the model's key never goes to an MCP server; remove {var} from its `env`/`env_vars`, \
         and give the server a key of its own under another name"
    )]
    ProviderKeyVariable {
        /// The server.
        server: String,
        /// Its file.
        file: String,
        /// The variable.
        var: String,
    },
    /// A value (or argument) that equals the run's provider key.
    #[error(
        "MCP server `{server}` ({file}): {what} holds the run's provider API key: the model's \
         key never goes to an MCP server; give the server a key of its own"
    )]
    ProviderKeyValue {
        /// The server.
        server: String,
        /// Its file.
        file: String,
        /// Which variable or argument.
        what: String,
    },
    /// `${VAR}` with VAR unset and no default.
    #[error(
        "MCP server `{server}` ({file}) needs {var}, which is not set; export it, or write \
         `${{{var}:-default}}`"
    )]
    Unset {
        /// The server.
        server: String,
        /// Its file.
        file: String,
        /// The variable.
        var: String,
    },
    /// The program is not found or not executable.
    #[error(
        "MCP server `{server}` ({file}): its command `{command}` {why}; install it (e.g. `uv \
         tool install` or `npm install -g` the server's package) or write its absolute path in \
         `command`"
    )]
    Command {
        /// The server.
        server: String,
        /// Its file.
        file: String,
        /// The command as written.
        command: String,
        /// What is wrong.
        why: String,
    },
    /// The program lies in the run's workspace.
    #[error(
        "MCP server `{server}` ({file}): its program {} is inside the workspace {}, which the \
         run's model can write; install the server outside the workspace and name that program",
        program.display(), workspace.display()
    )]
    CommandInWorkspace {
        /// The server.
        server: String,
        /// Its file.
        file: String,
        /// The program found.
        program: PathBuf,
        /// The workspace.
        workspace: PathBuf,
    },
    /// A tool asked for that the server's entry does not offer.
    #[error(
        "MCP tool `{tool}` of server `{server}` is turned off in {file} (`enabled_tools` / \
         `disabled_tools`); ask for another of its tools, or change that list"
    )]
    ToolOff {
        /// The server.
        server: String,
        /// Its file.
        file: String,
        /// The tool.
        tool: String,
    },
}

/// `entry` resolved for the run `run`, offering `only` of its tools
/// (`None`: all it lists, within its entry's `enabled_tools`).
pub fn resolve_server(
    entry: &McpServerEntry,
    only: Option<&[String]>,
    run: &RunSide<'_>,
) -> Result<McpServerSpec, McpResolveError> {
    let server = || entry.name.clone();
    let file = || entry.source.display().to_string();
    let protected = |var: &str| {
        run.protected_vars
            .iter()
            .any(|p| p == var)
            .then(|| McpResolveError::ProviderKeyVariable {
                server: server(),
                file: file(),
                var: var.to_owned(),
            })
    };
    let expand = |text: &str| -> Result<String, McpResolveError> {
        expand_vars(text, run.env, &|var| protected(var)).map_err(|e| match e {
            Expanded::Refused(refusal) => refusal,
            Expanded::Unset(var) => McpResolveError::Unset {
                server: server(),
                file: file(),
                var,
            },
        })
    };
    let key_value = |what: String, value: &str| match run.provider_key {
        Some(key) if value == key || (key.len() >= MIN_KEY_TO_SEARCH && value.contains(key)) => {
            Err(McpResolveError::ProviderKeyValue {
                server: server(),
                file: file(),
                what,
            })
        }
        _ => Ok(()),
    };

    let command = if entry.expands {
        expand(&entry.command)?
    } else {
        entry.command.clone()
    };
    let mut args = Vec::with_capacity(entry.args.len());
    for (i, arg) in entry.args.iter().enumerate() {
        let arg = if entry.expands {
            expand(arg)?
        } else {
            arg.clone()
        };
        key_value(format!("argument {}", i + 1), &arg)?;
        args.push(arg);
    }
    let mut env = Vec::with_capacity(entry.env.len());
    for (var, value) in &entry.env {
        if let Some(refusal) = protected(var) {
            return Err(refusal);
        }
        let value = match value {
            EnvValue::Literal(text) => text.clone(),
            // Codex passes a listed variable only when it is set.
            EnvValue::Passthrough => match (run.env)(var) {
                Some(value) => value,
                None => continue,
            },
            EnvValue::Expand(text) => expand(text)?,
        };
        key_value(var.clone(), &value)?;
        env.push(McpEnvVar {
            name: var.clone(),
            value: ApiKey::new(value),
        });
    }

    let program = find_program(&command, run.env).map_err(|why| McpResolveError::Command {
        server: server(),
        file: file(),
        command: command.clone(),
        why,
    })?;
    let canonical = std::fs::canonicalize(&program).unwrap_or_else(|_| program.clone());
    let workspace =
        std::fs::canonicalize(run.workspace).unwrap_or_else(|_| run.workspace.to_owned());
    // A console script's interpreter runs the server's code as much as
    // the script does: it must be as far from the model's reach, and
    // visible in the sandbox.
    let interpreter = script_interpreter(&canonical, &workspace, run.env).map(|named| {
        let real = std::fs::canonicalize(&named).unwrap_or_else(|_| named.clone());
        (named, real)
    });
    let interpreter_paths = interpreter.iter().flat_map(|(named, real)| [named, real]);
    for path in [&program, &canonical].into_iter().chain(interpreter_paths) {
        if path.starts_with(&workspace) || path.starts_with(run.workspace) {
            return Err(McpResolveError::CommandInWorkspace {
                server: server(),
                file: file(),
                program: path.clone(),
                workspace: run.workspace.to_owned(),
            });
        }
    }
    let home = (run.env)("HOME").map(PathBuf::from);
    let mut read_only: Vec<String> = entry
        .read_only
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    let mut given = installation_dirs(&program, &canonical, &args, &workspace, home.as_deref());
    if let Some((named, real)) = &interpreter {
        given.extend(installation_dirs(
            named,
            real,
            &[],
            &workspace,
            home.as_deref(),
        ));
    }
    for dir in given {
        let dir = dir.display().to_string();
        if !read_only.contains(&dir) {
            read_only.push(dir);
        }
    }

    let tools = selection(entry, only).map_err(|tool| McpResolveError::ToolOff {
        server: server(),
        file: file(),
        tool,
    })?;
    Ok(McpServerSpec {
        name: entry.name.clone(),
        command: program.display().to_string(),
        args,
        env,
        read_only,
        startup_timeout_ms: entry.startup_timeout_ms,
        tool_timeout_ms: entry.tool_timeout_ms,
        tools,
    })
}

/// The tools offered: the run's `only` within the entry's lists; the
/// error is a tool the run named that the entry turns off.
fn selection(entry: &McpServerEntry, only: Option<&[String]>) -> Result<McpToolSelection, String> {
    let allowed = |tool: &str| {
        !entry.disabled_tools.iter().any(|d| d == tool)
            && entry
                .enabled_tools
                .as_ref()
                .is_none_or(|e| e.iter().any(|t| t == tool))
    };
    let only = match only {
        None => entry.enabled_tools.clone(),
        Some(asked) => {
            if let Some(off) = asked.iter().find(|t| !allowed(t)) {
                return Err(off.clone());
            }
            Some(asked.to_vec())
        }
    };
    Ok(McpToolSelection {
        only,
        disabled: entry.disabled_tools.clone(),
    })
}

/// Why a `${VAR}` expansion stopped.
enum Expanded {
    Refused(McpResolveError),
    Unset(String),
}

/// `text` with each `${VAR}` and `${VAR:-default}` replaced from `env`;
/// `refuse` vets each variable named. Anything else is kept as written.
fn expand_vars(
    text: &str,
    env: EnvLookup<'_>,
    refuse: &dyn Fn(&str) -> Option<McpResolveError>,
) -> Result<String, Expanded> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let (var, default) = match inner.split_once(":-") {
            Some((var, default)) => (var, Some(default)),
            None => (inner, None),
        };
        if let Some(refusal) = refuse(var) {
            return Err(Expanded::Refused(refusal));
        }
        match (env(var), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => return Err(Expanded::Unset(var.to_owned())),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
