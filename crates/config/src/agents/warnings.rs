//! What reading agent files left behind, and how much of it a command
//! prints.
//!
//! A workspace with forty Claude Code agent files has a hundred dropped
//! tools and model aliases; printing each on every command buries the one
//! line that matters. So a command prints one grouped line for all of them
//! ([`WarningDetail::Grouped`]), each of the agent it runs in full, and
//! `subagent agents ls --warnings` prints them all ([`WarningDetail::Full`]).
//! A file that cannot be read at all is different: it is named on its own
//! line every time, with why, since an agent is missing until it is fixed.
//!
//! Pure: it formats; the caller decides where the lines go.

use std::fmt;
use std::path::PathBuf;

use super::claude_tools::CLAUDE_TOOL_MAP;

/// Something dropped while reading an agent file: the file stays usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentWarning {
    /// A Claude Code tool (as written, e.g. `Bash(git:*)`) with no
    /// equivalent here.
    ToolDropped(String),
    /// A Claude Code model alias (`sonnet`, `inherit`, ...): the run's
    /// model is used.
    ModelAlias(String),
    /// A Claude Code permission rule such as `Bash(git:*)`: the tool is
    /// given, its pattern is not enforced (docs/decisions.md, "Bash
    /// patterns").
    PatternNotEnforced(String),
    /// Something of its `mcpServers` field was left out (a server of a
    /// kind not run here, a key not supported), and why.
    McpServer(String),
}

impl fmt::Display for AgentWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentWarning::ToolDropped(entry) => write!(
                f,
                "tool `{entry}` dropped: no equivalent here (mapped: {})",
                CLAUDE_TOOL_MAP
                    .iter()
                    .map(|(claude, ours)| format!("{claude} -> {ours}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            AgentWarning::McpServer(text) => write!(f, "mcpServers: {text}"),
            AgentWarning::PatternNotEnforced(entry) => write!(
                f,
                "tool `{entry}` given without its pattern: patterns are not enforced here (a \
                 command prefix is no boundary for a shell: `git log; rm -rf .`), so the tool \
                 works on the whole workspace, confined as every call is; list the plain tool \
                 name to silence this, or leave the tool out"
            ),
            AgentWarning::ModelAlias(alias) => write!(
                f,
                "model `{alias}` is a Claude Code alias with no meaning here; the run's model is used"
            ),
        }
    }
}

/// An agent file that could not be read: skipped, so the rest of the
/// workspace works; a run that asks for its agent is refused with
/// [`UnreadableAgentFile::reason`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableAgentFile {
    /// The file.
    pub path: PathBuf,
    /// The agent it most likely defines (its `name:` line, else its stem).
    pub name: Option<String>,
    /// Why it cannot be read, naming the file and line.
    pub reason: String,
}

/// How much of the catalog's warnings a command prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarningDetail<'a> {
    /// One line for every agent's dropped tools and aliases, except the
    /// agent named here, whose warnings are printed in full.
    Grouped {
        /// The agent the command runs or shows.
        full_for: Option<&'a str>,
    },
    /// Every warning of every agent, one per line.
    Full,
}

/// The command that lists every warning, named in the grouped line.
pub const LIST_WARNINGS_COMMAND: &str = "subagent agents ls --warnings";
