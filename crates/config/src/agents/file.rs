//! One agent file: Markdown with YAML frontmatter, the format Claude Code
//! uses for its subagents.
//!
//! ```text
//! ---
//! name: reviewer
//! description: Reviews a diff and reports issues.
//! tools: bash_read, bash_ripgrep     # or a YAML list
//! model: gpt-4o-mini                 # optional
//! provider: openai-chat              # optional
//! maxTurns: 12                       # optional; limits as `subagent run`'s
//! timeout: 10m                       #   flags in camelCase: idleTimeout,
//! memory: 1G                         #   maxCost, pids, toolTimeout, ...
//! outputSchema: answer.schema.json   # optional: a path, or inline YAML
//! disabled: false                    # optional
//! isolation: overlay                 # optional: overlay or none
//! ---
//! The body is the system prompt.
//! ```
//!
//! Frontmatter that strict YAML rejects (an unquoted `: ` in a
//! `description`, common in public Claude Code collections) is read as
//! `key: value` lines, as Claude Code reads it (`lenient.rs`).
//!
//! In flows the file's text; out comes an [`AgentDefinition`] or an
//! [`AgentFileError`] naming the file, the line and the field. Unknown keys
//! are ignored (Claude Code files carry `color` and the like). Without
//! `tools` a `.subagent` file gets every built-in tool, as Claude Code's
//! agents inherit all of theirs.
//!
//! Claude Code files (`.claude/agents/*.md`) name Claude Code's tools; they
//! are mapped by [`CLAUDE_TOOL_MAP`]. A name with no equivalent here is
//! dropped with a warning rather than refusing the file, since the same
//! file must keep working in Claude Code. A permission rule such as
//! `Bash(git:*)` gives its tool with a warning that the pattern is not
//! enforced (docs/decisions.md, "Bash patterns"). Either flavor may list
//! `subagent` (Claude Code's `Task`), which admission takes away at the
//! depth limit, and MCP tools as Claude Code names them (`mcp__NAME`,
//! `mcp__NAME__TOOL`), which select configured servers (`crate::mcp`). This module never reads the disk: the caller does.

use std::path::{Path, PathBuf};

use serde_yaml_ng::{Mapping, Value};
use subagent_protocol::tool_names::{BUILTIN_TOOLS, SUBAGENT};

use super::catalog::{AgentDefinition, AgentOutputSchema, AgentSource};
use super::claude_tools::CLAUDE_TOOL_MAP;
use super::lenient::read_key_value_lines;
use super::warnings::AgentWarning;
pub use crate::project_files::AgentFileFlavor;
use crate::{LimitKey, LimitSet, RawLimit};

/// Claude Code's model aliases: they name its own model choice, so here
/// they are dropped with a warning and the run's model is used.
pub const CLAUDE_MODEL_ALIASES: &[&str] = &["inherit", "sonnet", "opus", "haiku"];

/// Why an agent file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AgentFileError {
    /// The file could not be read.
    #[error("read agent file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No `---` block at the top.
    #[error(
        "{}:1: agent file has no frontmatter: it must start with a `---` line, YAML, and a closing `---` line",
        path.display()
    )]
    NoFrontmatter {
        /// The file.
        path: PathBuf,
    },
    /// The frontmatter is not YAML, or not a mapping.
    #[error("{}:{line}: agent file frontmatter is not valid YAML: {message}", path.display())]
    Yaml {
        /// The file.
        path: PathBuf,
        /// Line in the file, 1-based.
        line: usize,
        /// What the YAML parser said.
        message: String,
    },
    /// A field is missing or has the wrong type or value.
    #[error("{}:{line}: agent file field `{field}`: {message}", path.display())]
    Field {
        /// The file.
        path: PathBuf,
        /// Line in the file, 1-based (the frontmatter's first line when the
        /// field is missing).
        line: usize,
        /// The frontmatter key.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
}

/// The servers of the file's `mcpServers` field (Claude Code's): a list
/// whose items name a configured server (nothing to define) or define
/// servers inline (`NAME: {command, args, env}`), or one such map. Inline
/// definitions are resolved and confined like configured ones when the
/// file's tools select them; a kind not run here is left out with a
/// warning.
fn mcp_servers(
    fields: &Fields<'_>,
    warnings: &mut Vec<AgentWarning>,
) -> Result<Vec<crate::mcp::McpServerEntry>, AgentFileError> {
    const FIELD: &str = "mcpServers";
    let mut defined = Vec::new();
    let mut left_out = Vec::new();
    let mut define = |map: &Mapping,
                      defined: &mut Vec<crate::mcp::McpServerEntry>|
     -> Result<(), AgentFileError> {
        for (name, value) in map {
            let Value::String(name) = name else {
                return Err(fields.error(FIELD, "a server's name must be text".into()));
            };
            let json = serde_json::to_value(value).map_err(|e| {
                fields.error(
                    FIELD,
                    format!("server `{name}` cannot be read as JSON ({e})"),
                )
            })?;
            match crate::mcp::parse_inline_server(fields.path, name, &json, &mut left_out) {
                Ok(Some(entry)) => defined.push(entry),
                Ok(None) => {}
                Err(message) => return Err(fields.error(FIELD, message)),
            }
        }
        Ok(())
    };
    match fields.map.get(FIELD) {
        None | Some(Value::Null) => {}
        Some(Value::Mapping(map)) => define(map, &mut defined)?,
        Some(Value::Sequence(items)) => {
            for item in items {
                match item {
                    Value::String(name) => crate::mcp::check_server_name(name)
                        .map_err(|message| fields.error(FIELD, message))?,
                    Value::Mapping(map) => define(map, &mut defined)?,
                    _ => {
                        return Err(fields.error(
                            FIELD,
                            "each item is a configured server's name or `NAME: {command, args}`"
                                .into(),
                        ));
                    }
                }
            }
        }
        Some(_) => {
            return Err(fields.error(
                FIELD,
                "expected a list of server names or `NAME: {command, args}` maps".into(),
            ));
        }
    }
    warnings.extend(left_out.into_iter().map(AgentWarning::McpServer));
    Ok(defined)
}

/// Parses an agent file's `text`; `path` is recorded as its source and
/// named in errors.
pub fn parse_agent_file(
    path: &Path,
    text: &str,
    flavor: AgentFileFlavor,
) -> Result<AgentDefinition, AgentFileError> {
    let (yaml, body) = split_frontmatter(text).ok_or_else(|| AgentFileError::NoFrontmatter {
        path: path.to_owned(),
    })?;
    // The YAML starts on the file's second line (after the opening `---`).
    const YAML_FIRST_LINE: usize = 2;
    let map = match serde_yaml_ng::from_str::<Value>(yaml) {
        Ok(Value::Mapping(map)) => map,
        // An empty block parses as null: every field is then missing.
        Ok(Value::Null) => Mapping::new(),
        // Not strict YAML: read as the format's owners do (`lenient.rs`).
        Ok(_) => read_key_value_lines(yaml).ok_or_else(|| AgentFileError::Yaml {
            path: path.to_owned(),
            line: YAML_FIRST_LINE,
            message: "expected `key: value` lines".into(),
        })?,
        Err(e) => read_key_value_lines(yaml).ok_or_else(|| AgentFileError::Yaml {
            path: path.to_owned(),
            line: e.location().map_or(1, |l| l.line() + YAML_FIRST_LINE - 1),
            message: file_lines(&e.to_string(), YAML_FIRST_LINE - 1),
        })?,
    };
    let fields = Fields {
        path,
        yaml,
        map: &map,
    };

    let name = fields
        .string("name")?
        .ok_or_else(|| fields.error("name", "missing; every agent needs a name".into()))?;
    if name.trim().is_empty() || name.chars().any(char::is_whitespace) {
        return Err(fields.error(
            "name",
            format!("`{name}` is not a name: use one word such as `reviewer`"),
        ));
    }
    let mut warnings = Vec::new();
    let tools = match fields.tool_list()? {
        None => match flavor {
            AgentFileFlavor::Subagent => BUILTIN_TOOLS.iter().map(|t| (*t).to_owned()).collect(),
            // Claude Code's "all tools": those with an equivalent here.
            AgentFileFlavor::ClaudeCode => CLAUDE_TOOL_MAP
                .iter()
                .map(|(_, ours)| (*ours).to_owned())
                .collect(),
        },
        Some(listed) => match flavor {
            AgentFileFlavor::Subagent => {
                if let Some(bad) = listed.iter().find(|t| !is_tool_here(t)) {
                    return Err(fields.error(
                        "tools",
                        format!(
                            "unknown tool `{bad}`; the tools are {}, {SUBAGENT}",
                            BUILTIN_TOOLS.join(", ")
                        ),
                    ));
                }
                listed
            }
            AgentFileFlavor::ClaudeCode => map_claude_tools(&listed, &mut warnings),
        },
    };
    let mut limits = LimitSet::default();
    for key in LimitKey::ALL {
        let field = key.agent_key();
        let raw = match map.get(field) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) => RawLimit::Text(s),
            Some(Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => RawLimit::Integer(i),
                (None, Some(x)) => RawLimit::Float(x),
                (None, None) => RawLimit::Text("?"),
            },
            Some(_) => {
                return Err(fields.error(
                    field,
                    "expected a number or a value with units such as `15m` or `512M`".into(),
                ));
            }
        };
        let value = key
            .parse(raw)
            .map_err(|message| fields.error(field, message))?;
        limits.set(key, value);
    }
    let output_schema = match map.get("outputSchema") {
        None | Some(Value::Null) => None,
        Some(Value::String(file)) if !file.trim().is_empty() => {
            let dir = path.parent().unwrap_or_else(|| Path::new("."));
            Some(AgentOutputSchema::File(dir.join(file.trim())))
        }
        Some(schema @ Value::Mapping(_)) => {
            let json = serde_json::to_string(schema).map_err(|e| {
                fields.error(
                    "outputSchema",
                    format!(
                        "cannot be written as JSON ({e}); use plain YAML maps, lists and scalars"
                    ),
                )
            })?;
            Some(AgentOutputSchema::Inline(json))
        }
        Some(_) => {
            return Err(fields.error(
                "outputSchema",
                "expected a JSON Schema written as YAML, or the path of a .json file next to the agent file".into(),
            ));
        }
    };
    let mut model = fields.string("model")?;
    if flavor == AgentFileFlavor::ClaudeCode
        && let Some(alias) = model.take_if(|m| CLAUDE_MODEL_ALIASES.contains(&m.as_str()))
    {
        warnings.push(AgentWarning::ModelAlias(alias));
    }
    let disabled = match map.get("disabled") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(fields.error("disabled", "expected `true` or `false`".into())),
    };
    let isolation = match fields.string("isolation")? {
        None => None,
        Some(text) => Some(
            text.parse::<crate::WorkspaceIsolation>()
                .map_err(|message| fields.error("isolation", message))?,
        ),
    };
    let mcp_servers = mcp_servers(&fields, &mut warnings)?;
    Ok(AgentDefinition {
        name,
        description: fields.string("description")?.unwrap_or_default(),
        system_prompt: body.trim().to_owned(),
        tools,
        mcp_servers,
        source: AgentSource::File(path.to_owned()),
        model,
        provider: fields.string("provider")?,
        limits,
        output_schema,
        disabled,
        warnings,
        // A file's prompt is the author's, as written.
        describes_tools: false,
        isolation,
    })
}

/// The name an agent file that cannot be read most likely defines: its
/// `name:` line when one can be found, else the file's stem (Claude Code's
/// files are named after their agent). A run that asks for this name is
/// refused with the file's error instead of finding another definition.
pub fn unreadable_agent_name(path: &Path, text: &str) -> Option<String> {
    let from_field = split_frontmatter(text)
        .and_then(|(yaml, _)| read_key_value_lines(yaml))
        .and_then(|map| match map.get("name") {
            Some(Value::String(name)) => Some(name.trim().to_owned()),
            _ => None,
        })
        .filter(|name| !name.is_empty());
    from_field.or_else(|| {
        path.file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
    })
}

/// The parser's message with its `at line N` counted from the file's first
/// line instead of the frontmatter's, so every number points into the file.
fn file_lines(message: &str, lines_before: usize) -> String {
    static AT_LINE: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"at line (\d+)").ok());
    let Some(at_line) = AT_LINE.as_ref() else {
        return message.to_owned();
    };
    at_line
        .replace_all(message, |caps: &regex::Captures<'_>| {
            match caps[1].parse::<usize>() {
                Ok(n) => format!("at line {}", n + lines_before),
                Err(_) => caps[0].to_owned(),
            }
        })
        .into_owned()
}

/// The YAML between a first line `---` and the next `---` line, and the
/// rest of the text; `None` when the file does not start that way.
fn split_frontmatter(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

/// A tool an agent file may name here: a built-in, `subagent`, or an MCP
/// server's (`mcp__NAME`, `mcp__NAME__TOOL`: kept whether or not NAME is
/// configured; a run leaves out a server nobody configured).
fn is_tool_here(name: &str) -> bool {
    name == SUBAGENT
        || BUILTIN_TOOLS.contains(&name)
        || subagent_protocol::mcp_server::parse_mcp_name(name).is_some()
}

/// Claude Code tool names as ours; names with no equivalent are dropped and
/// a warning says so. A rule such as `Bash(git:*)` is judged by its tool,
/// which is given with a warning that its pattern is not enforced.
fn map_claude_tools(listed: &[String], warnings: &mut Vec<AgentWarning>) -> Vec<String> {
    let mut tools: Vec<String> = Vec::new();
    for entry in listed {
        let (tool, pattern) = match entry.split_once('(') {
            Some((tool, _)) => (tool.trim(), true),
            None => (entry.trim(), false),
        };
        let ours = CLAUDE_TOOL_MAP
            .iter()
            .find(|(claude, _)| *claude == tool)
            .map(|(_, ours)| *ours)
            // A Claude Code file may already name our tools.
            .or_else(|| {
                BUILTIN_TOOLS
                    .iter()
                    .copied()
                    .chain([SUBAGENT])
                    .find(|t| *t == tool)
            })
            // Claude Code's own name for an MCP server's tool, kept as is.
            .or_else(|| {
                subagent_protocol::mcp_server::parse_mcp_name(tool)
                    .is_some()
                    .then_some(tool)
            });
        match ours {
            Some(ours) => {
                if pattern {
                    warnings.push(AgentWarning::PatternNotEnforced(entry.clone()));
                }
                if !tools.iter().any(|t| t == ours) {
                    tools.push(ours.to_owned());
                }
            }
            None => warnings.push(AgentWarning::ToolDropped(entry.clone())),
        }
    }
    tools
}

/// The frontmatter's keys, read one at a time so an error names its field.
struct Fields<'a> {
    path: &'a Path,
    yaml: &'a str,
    map: &'a Mapping,
}

impl Fields<'_> {
    /// The line of `field` in the file: the frontmatter line that starts
    /// with `field:`, else the frontmatter's first line.
    fn line_of(&self, field: &str) -> usize {
        self.yaml
            .lines()
            .position(|line| {
                line.strip_prefix(field)
                    .is_some_and(|rest| rest.trim_start().starts_with(':'))
            })
            .map_or(2, |i| i + 2)
    }

    fn error(&self, field: &'static str, message: String) -> AgentFileError {
        AgentFileError::Field {
            path: self.path.to_owned(),
            line: self.line_of(field),
            field,
            message,
        }
    }

    /// A text field; numbers and booleans are taken as written (`model: 4`).
    fn string(&self, field: &'static str) -> Result<Option<String>, AgentFileError> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(Value::Bool(b)) => Ok(Some(b.to_string())),
            Some(_) => Err(self.error(field, "expected text".into())),
        }
    }

    /// `tools`: `a, b` or a YAML list of names; `None` when absent.
    fn tool_list(&self) -> Result<Option<Vec<String>>, AgentFileError> {
        let names = match self.map.get("tools") {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::String(s)) => s
                .split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
                .collect(),
            Some(Value::Sequence(items)) => {
                let mut names = Vec::new();
                for item in items {
                    match item {
                        Value::String(s) if !s.trim().is_empty() => names.push(s.trim().to_owned()),
                        _ => {
                            return Err(
                                self.error("tools", "every list item must be a tool name".into())
                            );
                        }
                    }
                }
                names
            }
            Some(_) => {
                return Err(self.error(
                    "tools",
                    "expected `a, b` or a YAML list of tool names".into(),
                ));
            }
        };
        Ok(Some(names))
    }
}
