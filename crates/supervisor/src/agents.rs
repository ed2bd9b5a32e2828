//! Agent definitions: a name, a system prompt and a tool subset.
//!
//! For now the catalog is built in; the interfaces work adds definitions
//! from files. An unknown name is `UNKNOWN_AGENT` with the list of known
//! names, so a parent model can correct itself.

/// One agent definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDefinition {
    /// Name the parent asks for.
    pub name: String,
    /// What it is for (shown in listings).
    pub description: String,
    /// System prompt given to the model.
    pub system_prompt: String,
    /// Tools it may call (names from crates/tools).
    pub tools: Vec<String>,
}

/// The agents a supervisor knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentCatalog {
    agents: Vec<AgentDefinition>,
}

impl AgentCatalog {
    /// The built-in agents.
    pub fn builtin() -> Self {
        let def = |name: &str, description: &str, prompt: &str| AgentDefinition {
            name: name.to_owned(),
            description: description.to_owned(),
            system_prompt: prompt.to_owned(),
            tools: Vec::new(),
        };
        Self {
            agents: vec![
                def(
                    "general",
                    "General-purpose helper for a self-contained task.",
                    "You are a focused subagent. Do exactly the task you are given and answer concisely.",
                ),
                def(
                    "explorer",
                    "Finds where things are and reports file paths and facts.",
                    "You are an explorer subagent. Find the facts the task asks for and report them with file paths. Do not change anything.",
                ),
                def(
                    "researcher",
                    "Answers a question from sources and cites them.",
                    "You are a research subagent. Answer the question and say where each fact came from.",
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
