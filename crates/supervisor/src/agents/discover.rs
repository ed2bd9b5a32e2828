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
//! In: a workspace dir and the user's agents dir (passed in, so tests never
//! read the real home). Out: an [`AgentCatalog`] or the first file's error.
//! It only reads.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::catalog::{AgentCatalog, AgentDefinition};
use super::file::{AgentFileError, AgentFileFlavor, parse_agent_file};

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
    /// The workspace path cannot be made absolute.
    #[error("resolve workspace {}: {source}", dir.display())]
    Workspace {
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

/// The agents dirs to read for `workspace`, nearest first, with the flavor
/// of each (see the module docs for the order).
pub fn agent_dirs(
    workspace: &Path,
    user_dir: Option<&Path>,
) -> Result<Vec<(PathBuf, AgentFileFlavor)>, DiscoverError> {
    let start = std::path::absolute(workspace).map_err(|source| DiscoverError::Workspace {
        dir: workspace.to_owned(),
        source,
    })?;
    let mut dirs = Vec::new();
    for dir in start.ancestors() {
        dirs.push((dir.join(".subagent/agents"), AgentFileFlavor::Subagent));
        dirs.push((dir.join(".claude/agents"), AgentFileFlavor::ClaudeCode));
        // Above the repository root is someone else's project.
        if dir.join(".git").exists() {
            break;
        }
    }
    if let Some(user) = user_dir {
        dirs.push((user.to_owned(), AgentFileFlavor::Subagent));
    }
    Ok(dirs)
}

/// The catalog for `workspace`: agent files in lookup order, then the
/// built-ins not defined by a file.
pub fn discover_catalog(
    workspace: &Path,
    user_dir: Option<&Path>,
) -> Result<AgentCatalog, DiscoverError> {
    let mut agents: Vec<AgentDefinition> = Vec::new();
    for (dir, flavor) in agent_dirs(workspace, user_dir)? {
        for path in agent_files(&dir)? {
            let text = std::fs::read_to_string(&path).map_err(|source| AgentFileError::Read {
                path: path.clone(),
                source,
            })?;
            let agent = parse_agent_file(&path, &text, flavor)?;
            if !agents.iter().any(|a| a.name == agent.name) {
                agents.push(agent);
            }
        }
    }
    for builtin in AgentCatalog::builtin().agents() {
        if !agents.iter().any(|a| a.name == builtin.name) {
            agents.push(builtin.clone());
        }
    }
    Ok(AgentCatalog::new(agents))
}

/// `dir/*.md` in name order; none when `dir` does not exist.
fn agent_files(dir: &Path) -> Result<Vec<PathBuf>, DiscoverError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(DiscoverError::ListDir {
                dir: dir.to_owned(),
                source,
            });
        }
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| DiscoverError::ListDir {
            dir: dir.to_owned(),
            source,
        })?;
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "md") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}
