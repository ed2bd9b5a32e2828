//! The built-in agents.
//!
//! A built-in's prompt says what the agent is for; the sentence naming its
//! tools is written per run from the tools the run really has
//! ([`super::tool_guide`]).

use subagent_protocol::tool_names::{
    BASH, BASH_FIND, BASH_READ, BASH_RIPGREP, BUILTIN_TOOLS, EDIT_FILE, LIST_DIR, MULTI_EDIT,
    PYTHON_EXECUTE, READ_ONLY_TOOLS, SCRAPE_WEBPAGE, SEARCH_WEB, SUBAGENT, WRITE_FILE,
};

use super::catalog::{AgentCatalog, AgentDefinition};

impl AgentCatalog {
    /// The built-in agents: `general` with the file tools (reading and
    /// writing), python_execute and bash (docs/decisions.md, "general and
    /// the tools that act"); `explorer` and `reviewer` with the read-only file
    /// tools and `researcher` with those and the web tools (they report;
    /// they neither change nor run anything); `implementer` with every
    /// tool, `subagent` included, which the supervisor takes away at the
    /// depth limit (so with the default `max_depth` 1 it never delegates;
    /// docs/decisions.md, "implementer and the subagent tool"). Their
    /// prompts name the tools a run has
    /// ([`AgentDefinition::system_prompt_for`]).
    pub fn builtin() -> Self {
        let every_tool: Vec<&str> = BUILTIN_TOOLS.iter().copied().chain([SUBAGENT]).collect();
        let def = |name: &str, description: &str, prompt: &str, tools: &[&str]| AgentDefinition {
            name: name.to_owned(),
            description: description.to_owned(),
            system_prompt: prompt.to_owned(),
            tools: tools.iter().map(|t| (*t).to_owned()).collect(),
            describes_tools: true,
            isolation: None,
            ..AgentDefinition::default()
        };
        Self::new(vec![
            def(
                "general",
                "General-purpose helper for a self-contained task.",
                "You are a focused subagent. Do exactly the task you are given and answer concisely. \
                 Use your tools when the task needs facts from the workspace's files or a computation.",
                &[
                    BASH_FIND,
                    BASH_RIPGREP,
                    BASH_READ,
                    LIST_DIR,
                    WRITE_FILE,
                    EDIT_FILE,
                    MULTI_EDIT,
                    PYTHON_EXECUTE,
                    BASH,
                ],
            ),
            def(
                "explorer",
                "Finds where things are and reports file paths and facts.",
                "You are an explorer subagent. Find the facts the task asks for and report them \
                 with file paths. Do not change anything.",
                READ_ONLY_TOOLS,
            ),
            def(
                "researcher",
                "Answers a question from sources and cites them.",
                "You are a research subagent. Answer the question and say where each fact came from: \
                 cite a file as path:line and a web page by its URL.",
                &[
                    BASH_FIND,
                    BASH_RIPGREP,
                    BASH_READ,
                    LIST_DIR,
                    SEARCH_WEB,
                    SCRAPE_WEBPAGE,
                ],
            ),
            def(
                "reviewer",
                "Reviews code and reports issues with file:line.",
                "You are a code review subagent. Review what the task names and report each issue \
                 as path:line, what is wrong and why it matters, most serious first. Do not change anything.",
                READ_ONLY_TOOLS,
            ),
            def(
                "implementer",
                "Makes the change in the workspace and reports what it changed.",
                "You are an implementer subagent. Make the change the task asks for in the workspace, \
                 then report which files you changed and how. Edit files and run checks with the tools \
                 you have; when none of them can change files, say exactly what should change.",
                &every_tool,
            ),
        ])
    }
}
