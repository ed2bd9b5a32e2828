//! Agents: built-in definitions, agent files (Markdown with YAML
//! frontmatter, Claude Code's format) and the lookup order over them.
//!
//! An agent file that cannot be read never takes the workspace down: it is
//! skipped and named in a warning, and only a run asking for its agent is
//! refused.

mod builtin;
mod catalog;
mod claude_tools;
mod discover;
mod file;
mod lenient;
mod tool_guide;
mod warning_lines;
mod warnings;

#[cfg(test)]
mod catalog_tests;
#[cfg(test)]
mod discover_tests;
#[cfg(test)]
mod file_tests;
#[cfg(test)]
mod lenient_tests;
#[cfg(test)]
mod warnings_tests;

pub use catalog::{AgentCatalog, AgentDefinition, AgentOutputSchema, AgentSource};
pub use claude_tools::CLAUDE_TOOL_MAP;
pub use discover::{DiscoverError, default_user_agents_dir, discover_catalog, user_agents_dir};
pub use file::{AgentFileError, AgentFileFlavor, parse_agent_file, unreadable_agent_name};
pub use warnings::{AgentWarning, LIST_WARNINGS_COMMAND, UnreadableAgentFile, WarningDetail};
