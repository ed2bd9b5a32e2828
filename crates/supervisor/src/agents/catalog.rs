//! Agent definitions: a name, a system prompt and a tool subset, and the
//! catalog a supervisor looks names up in.
//!
//! The built-in agents live here; agent files (`file.rs`) and the lookup
//! order over directories (`discover.rs`) build catalogs that put file
//! definitions ahead of these. An unknown name is `UNKNOWN_AGENT` with the list of known
//! names, so a parent model can correct itself. Tool lists name tools from
//! `subagent_protocol::tool_names`; admission checks them before a run starts.

use std::fmt;
use std::path::PathBuf;

use crate::config::LimitSet;
use subagent_protocol::tool_names::{
    BASH_FIND, BASH_READ, BASH_RIPGREP, BUILTIN_TOOLS, PYTHON_EXECUTE, READ_ONLY_TOOLS,
    SCRAPE_WEBPAGE, SEARCH_WEB,
};

/// Where a definition came from: shown by `subagent agents ls` and named
/// in refusals, so an operator knows which file to edit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AgentSource {
    /// Compiled into this binary.
    #[default]
    BuiltIn,
    /// An agent file (`.subagent/agents/*.md`, `.claude/agents/*.md` or the
    /// user's agents dir).
    File(PathBuf),
}

impl fmt::Display for AgentSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentSource::BuiltIn => f.write_str("built-in"),
            AgentSource::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// An agent's output schema, as its file gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentOutputSchema {
    /// Written in the frontmatter, here as JSON text.
    Inline(String),
    /// A JSON file, resolved against the agent file's directory; read when
    /// the agent runs, so a missing file fails only that agent's runs.
    File(PathBuf),
}

/// One agent definition.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentDefinition {
    /// Name the parent asks for.
    pub name: String,
    /// What it is for (shown in listings).
    pub description: String,
    /// System prompt given to the model.
    pub system_prompt: String,
    /// Tools it may call, by name (`subagent_protocol::tool_names`); the
    /// caller's subset replaces it when given.
    pub tools: Vec<String>,
    /// Where it was defined.
    pub source: AgentSource,
    /// `model` from its file: the run's model unless `--model` is given.
    pub model: Option<String>,
    /// `provider` from its file (a configured provider's name or a kind):
    /// the run's provider unless `--provider` is given.
    pub provider: Option<String>,
    /// Limits from its file (`timeout`, `maxTurns`, `memory`, ...): above
    /// the config files, below the run's flags.
    pub limits: LimitSet,
    /// `outputSchema` from its file: the run's schema unless
    /// `--output-schema` is given.
    pub output_schema: Option<AgentOutputSchema>,
    /// `disabled: true`: running it is refused with SUBAGENT_DISABLED.
    pub disabled: bool,
    /// What was dropped while reading its file (Claude Code tools with no
    /// equivalent here).
    pub warnings: Vec<String>,
}

/// The agents a supervisor knows.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentCatalog {
    agents: Vec<AgentDefinition>,
}

impl AgentCatalog {
    /// The built-in agents: `general` and `implementer` with the file tools
    /// and python_execute, `explorer`, `researcher` and `reviewer` with the
    /// read-only file tools (they report; they neither change nor run
    /// anything). Each prompt names exactly the tools its agent gets.
    pub fn builtin() -> Self {
        let def = |name: &str, description: &str, prompt: &str, tools: &[&str]| AgentDefinition {
            name: name.to_owned(),
            description: description.to_owned(),
            system_prompt: prompt.to_owned(),
            tools: tools.iter().map(|t| (*t).to_owned()).collect(),
            ..AgentDefinition::default()
        };
        Self {
            agents: vec![
                def(
                    "general",
                    "General-purpose helper for a self-contained task.",
                    "You are a focused subagent. Do exactly the task you are given and answer concisely. \
                     Your tools: bash_find lists files by glob, bash_ripgrep searches file contents, \
                     bash_read reads a file with line numbers, python_execute runs Python in a sandbox. \
                     Paths are relative to the workspace; use the tools when the task needs facts \
                     from its files or a computation.",
                    &[BASH_FIND, BASH_RIPGREP, BASH_READ, PYTHON_EXECUTE],
                ),
                def(
                    "explorer",
                    "Finds where things are and reports file paths and facts.",
                    "You are an explorer subagent. Find the facts the task asks for and report them with file paths. Do not change anything. \
                     Your tools: bash_find lists files by glob, bash_ripgrep searches file contents, \
                     bash_read reads a file with line numbers. Paths are relative to the workspace.",
                    READ_ONLY_TOOLS,
                ),
                def(
                    "researcher",
                    "Answers a question from sources and cites them.",
                    "You are a research subagent. Answer the question and say where each fact came from. \
                     Your tools: bash_find lists files by glob, bash_ripgrep searches file contents, \
                     bash_read reads a file with line numbers, search_web searches the web, \
                     scrape_webpage reads one web page. Paths are relative to the workspace; \
                     cite a file as path:line and a web page by its URL.",
                    &[
                        BASH_FIND,
                        BASH_RIPGREP,
                        BASH_READ,
                        SEARCH_WEB,
                        SCRAPE_WEBPAGE,
                    ],
                ),
                def(
                    "reviewer",
                    "Reviews code and reports issues with file:line.",
                    "You are a code review subagent. Review what the task names and report each issue \
                     as path:line, what is wrong and why it matters, most serious first. Do not change anything. \
                     Your tools: bash_find lists files by glob, bash_ripgrep searches file contents, \
                     bash_read reads a file with line numbers. Paths are relative to the workspace.",
                    READ_ONLY_TOOLS,
                ),
                def(
                    "implementer",
                    "Makes the change in the workspace and reports what it changed.",
                    "You are an implementer subagent. Make the change the task asks for in the workspace, \
                     then report which files you changed and how. \
                     Your tools: bash_find lists files by glob, bash_ripgrep searches file contents, \
                     bash_read reads a file with line numbers, python_execute runs Python in a sandbox \
                     with the workspace writable (use it to edit files and to run checks), \
                     search_web searches the web, scrape_webpage reads one web page. \
                     Paths are relative to the workspace.",
                    BUILTIN_TOOLS,
                ),
            ],
        }
    }

    /// Every agent, in lookup order (the first of a name wins).
    pub fn agents(&self) -> &[AgentDefinition] {
        &self.agents
    }

    /// A catalog of exactly these agents.
    pub fn new(agents: Vec<AgentDefinition>) -> Self {
        Self { agents }
    }

    /// The agent called `name`.
    pub fn get(&self, name: &str) -> Option<&AgentDefinition> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// Names of all agents, in catalog order.
    pub fn names(&self) -> Vec<&str> {
        self.agents.iter().map(|a| a.name.as_str()).collect()
    }

    /// The SUBAGENT_DISABLED message for `agent`.
    pub fn disabled_message(agent: &AgentDefinition) -> String {
        format!(
            "agent {} is disabled (disabled: true in {}); remove that line to run it",
            agent.name, agent.source
        )
    }

    /// The UNKNOWN_AGENT message for `name`.
    pub fn unknown_message(&self, name: &str) -> String {
        format!(
            "Unknown agent: {name}. Available agents: {}",
            self.names().join(", ")
        )
    }
}
