//! Agent definitions: a name, a system prompt and a tool subset.
//!
//! For now the catalog is built in; the interfaces work adds definitions
//! from files. An unknown name is `UNKNOWN_AGENT` with the list of known
//! names, so a parent model can correct itself. Tool lists name tools from
//! `subagent_protocol::tool_names`; admission checks them before a run starts.

use subagent_protocol::tool_names::{
    BASH_FIND, BASH_READ, BASH_RIPGREP, PYTHON_EXECUTE, READ_ONLY_TOOLS,
};

/// One agent definition.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

/// The agents a supervisor knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentCatalog {
    agents: Vec<AgentDefinition>,
}

impl AgentCatalog {
    /// The built-in agents: `general` with the file tools and
    /// python_execute, `explorer` and `researcher` with the read-only file
    /// tools (they report; they neither change nor run anything). Each
    /// prompt names exactly the tools its agent gets.
    pub fn builtin() -> Self {
        let def = |name: &str, description: &str, prompt: &str, tools: &[&str]| AgentDefinition {
            name: name.to_owned(),
            description: description.to_owned(),
            system_prompt: prompt.to_owned(),
            tools: tools.iter().map(|t| (*t).to_owned()).collect(),
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
                     bash_read reads a file with line numbers. Paths are relative to the workspace; \
                     cite a file as path:line.",
                    READ_ONLY_TOOLS,
                ),
            ],
        }
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

    /// The UNKNOWN_AGENT message for `name`.
    pub fn unknown_message(&self, name: &str) -> String {
        format!(
            "Unknown agent: {name}. Available agents: {}",
            self.names().join(", ")
        )
    }
}
