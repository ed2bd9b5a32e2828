//! Agent definitions: a name, a system prompt and a tool subset, and the
//! catalog a supervisor looks names up in.
//!
//! The built-in agents live in `builtin.rs`; agent files (`file.rs`) and the lookup
//! order over directories (`discover.rs`) build catalogs that put file
//! definitions ahead of these. An unknown name is `UNKNOWN_AGENT` with the list of known
//! names, so a parent model can correct itself. Tool lists name tools from
//! `subagent_protocol::tool_names`; admission checks them before a run starts.

use std::fmt;
use std::path::PathBuf;

use super::tool_guide::tool_guide;
use super::warnings::{AgentWarning, UnreadableAgentFile};
use crate::LimitSet;

/// Where a definition came from: shown by `subagent agents ls` and named
/// in refusals, so an operator knows which file to edit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
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
    /// MCP servers the file defines itself (`mcpServers`, Claude Code's
    /// field), found before the configured ones of the same name when its
    /// tools select them; empty for built-in agents.
    pub mcp_servers: Vec<crate::mcp::McpServerEntry>,
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
    /// equivalent here, model aliases).
    pub warnings: Vec<AgentWarning>,
    /// Whether a sentence naming the run's tools follows the prompt
    /// ([`AgentDefinition::system_prompt_for`]): the built-ins' prompts
    /// describe their tools, and a run may have fewer than they list.
    pub describes_tools: bool,
    /// `isolation` from its file (`overlay` or `none`): the run's unless
    /// `--isolation` is given.
    pub isolation: Option<crate::WorkspaceIsolation>,
}

impl AgentDefinition {
    /// The system prompt of a run that has exactly `tools`: the prompt,
    /// and for the built-ins a sentence naming those tools and no other
    /// (`--tools bash_read` gets a prompt that mentions only bash_read).
    pub fn system_prompt_for(&self, tools: &[String]) -> String {
        if self.describes_tools {
            format!("{} {}", self.system_prompt, tool_guide(tools))
        } else {
            self.system_prompt.clone()
        }
    }
}

/// The agents a supervisor knows.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentCatalog {
    agents: Vec<AgentDefinition>,
    unreadable: Vec<UnreadableAgentFile>,
}

impl AgentCatalog {
    /// Every agent, in lookup order (the first of a name wins).
    pub fn agents(&self) -> &[AgentDefinition] {
        &self.agents
    }

    /// A catalog of exactly these agents.
    pub fn new(agents: Vec<AgentDefinition>) -> Self {
        Self {
            agents,
            unreadable: Vec::new(),
        }
    }

    /// These agents, and the agent files that were skipped because they
    /// cannot be read.
    pub fn with_unreadable(
        agents: Vec<AgentDefinition>,
        unreadable: Vec<UnreadableAgentFile>,
    ) -> Self {
        Self { agents, unreadable }
    }

    /// The agent files skipped because they cannot be read, in lookup order.
    pub fn unreadable(&self) -> &[UnreadableAgentFile] {
        &self.unreadable
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

    /// The UNKNOWN_AGENT message for `name`: when a skipped agent file
    /// defines it, that file and why it cannot be read.
    pub fn unknown_message(&self, name: &str) -> String {
        let available = self.names().join(", ");
        match self
            .unreadable
            .iter()
            .find(|file| file.name.as_deref() == Some(name))
        {
            Some(file) => format!(
                "Unknown agent: {name}: its agent file cannot be read ({}); fix the file \
                 (`subagent agents --help` shows the format). Available agents: {available}",
                file.reason
            ),
            None => format!("Unknown agent: {name}. Available agents: {available}"),
        }
    }
}
