//! Where agent files are found, and in which order a name is looked up.
//!
//! From the workspace up to the repository root (the first directory
//! holding `.git`; without one, up to the filesystem root), each directory
//! contributes `.subagent/agents/*.md` and then Claude Code's
//! `.claude/agents/*.md`; nearer directories come first. Then the user's
//! agents dir ([`user_agents_dir`]), then the built-ins. The first
//! definition of a name wins; later ones are shadowed. Files in one
//! directory are read in name order, so the outcome does not depend on the
//! filesystem's listing order.
//!
//! The project's files (the walk up to the repository root) count only when
//! the operator trusted them (`crate::config::read_project`, which read
//! them once; they are parsed from that text here).
//!
//! In: the project as read and the user's agents dir (passed in, so tests
//! never read the real home). Out: an [`AgentCatalog`] or the first file's
//! error. It only reads.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::catalog::{AgentCatalog, AgentDefinition};
use super::file::{AgentFileError, AgentFileFlavor, parse_agent_file};
use crate::config::{ProjectConfig, ProjectFileKind};

/// Why discovery failed.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    /// An agent file is malformed or unreadable.
    #[error(transparent)]
    File(#[from] AgentFileError),
    /// An agents directory exists but cannot be listed.
    #[error("list agents dir {}: {source}", dir.display())]
    ListDir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The user's agents dir: `agents` in the user's config dir
/// ([`crate::config::user_config_dir`]: `$XDG_CONFIG_HOME/subagent` when
/// that is set and absolute, else `$HOME/.config/subagent`); `None` without
/// either. Pure: the caller passes the variables.
pub fn user_agents_dir(
    xdg_config_home: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    crate::config::user_config_dir(xdg_config_home, home).map(|dir| dir.join("agents"))
}

/// [`user_agents_dir`] from this process's environment.
pub fn default_user_agents_dir() -> Option<PathBuf> {
    user_agents_dir(
        std::env::var_os("XDG_CONFIG_HOME"),
        std::env::var_os("HOME"),
    )
}

/// The catalog for a workspace: its project's agent files when the
/// operator trusted them (`project` read them: see
/// [`crate::config::read_project`]), then the user's, then the built-ins
/// not defined by a file.
pub fn discover_catalog(
    project: &ProjectConfig,
    user_dir: Option<&Path>,
) -> Result<AgentCatalog, DiscoverError> {
    let mut agents: Vec<AgentDefinition> = Vec::new();
    let mut add = |agent: AgentDefinition| {
        if !agents.iter().any(|a| a.name == agent.name) {
            agents.push(agent);
        }
    };
    for file in project.trusted_files() {
        if let ProjectFileKind::Agent(flavor) = file.kind {
            add(parse_agent_file(&file.path, &file.text, flavor)?);
        }
    }
    if let Some(dir) = user_dir {
        for path in agent_files(dir)? {
            let text = std::fs::read_to_string(&path).map_err(|source| AgentFileError::Read {
                path: path.clone(),
                source,
            })?;
            add(parse_agent_file(&path, &text, AgentFileFlavor::Subagent)?);
        }
    }
    for builtin in AgentCatalog::builtin().agents() {
        add(builtin.clone());
    }
    Ok(AgentCatalog::new(agents))
}

/// `dir/*.md` in name order; none when `dir` does not exist.
fn agent_files(dir: &Path) -> Result<Vec<PathBuf>, DiscoverError> {
    crate::config::md_files_in(dir).map_err(|source| DiscoverError::ListDir {
        dir: dir.to_owned(),
        source,
    })
}
