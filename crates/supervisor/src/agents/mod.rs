//! Agents: built-in definitions, agent files (Markdown with YAML
//! frontmatter, Claude Code's format) and the lookup order over them.

mod catalog;
mod discover;
mod file;

#[cfg(test)]
mod catalog_tests;
#[cfg(test)]
mod discover_tests;
#[cfg(test)]
mod file_tests;

pub use catalog::{AgentCatalog, AgentDefinition, AgentOutputSchema, AgentSource};
pub use discover::{DiscoverError, default_user_agents_dir, discover_catalog, user_agents_dir};
pub use file::{AgentFileError, AgentFileFlavor, CLAUDE_TOOL_MAP, parse_agent_file};
