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
//! the operator trusted them (`crate::read_project`, which read
//! them once; they are parsed from that text here).
//!
//! A file that cannot be read (not UTF-8, no frontmatter, a field with a
//! wrong value, frontmatter that neither YAML nor the `key: value` reading
//! accepts) is skipped and kept in the catalog's
//! [`AgentCatalog::unreadable`]; the name it most likely defines stays
//! taken, so a run asking for it is refused with the file's error rather
//! than given a later definition of that name.
//!
//! Agent files are read as untrusted input ([`subagent_session::untrusted_file`]): a
//! link, a FIFO, or a file over [`AGENT_FILE_CAP`] is skipped unread and
//! kept in [`AgentCatalog::unreadable`] with why; the project's were
//! skipped when the trust check read them ([`ProjectConfig::skipped`]) and
//! are reported here, trusted or not, since they are never loaded.
//!
//! In: the project as read and the user's agents dir (passed in, so tests
//! never read the real home). Out: an [`AgentCatalog`], or an error only
//! when the user's agents dir exists and cannot be listed. It only reads.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::catalog::{AgentCatalog, AgentDefinition};
use super::file::{AgentFileError, AgentFileFlavor, parse_agent_file, unreadable_agent_name};
use super::warnings::UnreadableAgentFile;
use crate::{AGENT_FILE_CAP, ProjectConfig, ProjectFileKind};
use subagent_session::untrusted_file::{UntrustedFileError, read_capped_string};

/// Why discovery failed.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
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
/// ([`crate::user_config_dir`]: `$XDG_CONFIG_HOME/subagent` when
/// that is set and absolute, else `$HOME/.config/subagent`); `None` without
/// either. Pure: the caller passes the variables.
pub fn user_agents_dir(
    xdg_config_home: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    crate::user_config_dir(xdg_config_home, home).map(|dir| dir.join("agents"))
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
/// [`crate::read_project`]), then the user's, then the built-ins
/// not defined by a file.
pub fn discover_catalog(
    project: &ProjectConfig,
    user_dir: Option<&Path>,
) -> Result<AgentCatalog, DiscoverError> {
    let mut found = Found::default();
    for file in project.skipped() {
        if matches!(file.kind, ProjectFileKind::Agent(_)) {
            // Never parsed, it defines no name: a run asking for the name
            // it might define gets whatever else defines it.
            found.unreadable.push(UnreadableAgentFile {
                path: file.path.clone(),
                name: None,
                reason: file.reason.clone(),
            });
        }
    }
    for file in project.trusted_files() {
        if let ProjectFileKind::Agent(flavor) = file.kind {
            found.add(&file.path, Ok(&file.text), flavor);
        }
    }
    if let Some(dir) = user_dir {
        for path in agent_files(dir)? {
            match read_capped_string(&path, AGENT_FILE_CAP) {
                Ok(Some(text)) => found.add(&path, Ok(&text), AgentFileFlavor::Subagent),
                // Gone between the listing and the open.
                Ok(None) => {}
                Err(UntrustedFileError::Io { source, .. }) => {
                    found.add(&path, Err(&source), AgentFileFlavor::Subagent);
                }
                Err(refused) => found.skip(&path, refused.to_string()),
            }
        }
    }
    for builtin in AgentCatalog::builtin().agents() {
        found.add_definition(builtin.clone());
    }
    Ok(AgentCatalog::with_unreadable(
        found.agents,
        found.unreadable,
    ))
}

/// The definitions so far, in lookup order, and the files skipped.
#[derive(Default)]
struct Found {
    agents: Vec<AgentDefinition>,
    unreadable: Vec<UnreadableAgentFile>,
}

impl Found {
    /// Whether an earlier file already defines `name` (a skipped file
    /// counts: its agent must not silently become another definition).
    fn taken(&self, name: &str) -> bool {
        self.agents.iter().any(|a| a.name == name)
            || self
                .unreadable
                .iter()
                .any(|f| f.name.as_deref() == Some(name))
    }

    fn add_definition(&mut self, agent: AgentDefinition) {
        if !self.taken(&agent.name) {
            self.agents.push(agent);
        }
    }

    /// The file at `path`, not read (a link, a FIFO, over its cap): the
    /// name its file name suggests stays taken, as any unreadable file's.
    fn skip(&mut self, path: &Path, reason: String) {
        let name = unreadable_agent_name(path, "");
        if name.as_deref().is_some_and(|n| self.taken(n)) {
            return;
        }
        self.unreadable.push(UnreadableAgentFile {
            path: path.to_owned(),
            name,
            reason,
        });
    }

    /// The file at `path` with its `text` (or why it could not be read).
    fn add(&mut self, path: &Path, text: Result<&str, &std::io::Error>, flavor: AgentFileFlavor) {
        let parsed = match text {
            Ok(text) => parse_agent_file(path, text, flavor).map_err(|e| (e, Some(text))),
            Err(e) => Err((
                AgentFileError::Read {
                    path: path.to_owned(),
                    source: std::io::Error::new(e.kind(), e.to_string()),
                },
                None,
            )),
        };
        match parsed {
            Ok(agent) => self.add_definition(agent),
            Err((error, text)) => {
                let name = unreadable_agent_name(path, text.unwrap_or_default());
                // A file shadowed by an earlier definition of its name
                // would not be used even if it could be read.
                if name.as_deref().is_some_and(|n| self.taken(n)) {
                    return;
                }
                self.unreadable.push(UnreadableAgentFile {
                    path: path.to_owned(),
                    name,
                    reason: error.to_string(),
                });
            }
        }
    }
}

/// `dir/*.md` in name order; none when `dir` does not exist.
fn agent_files(dir: &Path) -> Result<Vec<PathBuf>, DiscoverError> {
    crate::md_files_in(dir).map_err(|source| DiscoverError::ListDir {
        dir: dir.to_owned(),
        source,
    })
}
