//! Where config files are and reading them: the user's
//! (`$XDG_CONFIG_HOME/subagent/config.toml`, else
//! `~/.config/subagent/config.toml`) and the project's (the nearest
//! `.subagent/config.toml` from the workspace up to the repository root,
//! the same walk as agent files, taken only when the operator trusted the
//! project: `trust.rs`). A file that does not exist is no layer;
//! one that exists and is malformed is an error, since running with half a
//! configuration would surprise more than stopping.
//!
//! It reads files; it never writes them and never reads the environment
//! (the caller passes the variables, so tests never see the real home).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::file::{ConfigFile, ConfigFileError, parse_config};
use super::trust::ProjectConfig;

/// The project config's place relative to a project directory.
pub const PROJECT_CONFIG: &str = ".subagent/config.toml";

/// A config file that was found and read.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigLayer {
    /// The file.
    pub path: PathBuf,
    /// What it says.
    pub file: ConfigFile,
}

/// The config files of one workspace, lowest precedence first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadedConfig {
    /// `~/.config/subagent/config.toml`, when it exists.
    pub user: Option<ConfigLayer>,
    /// The project's `.subagent/config.toml`, when one exists.
    pub project: Option<ConfigLayer>,
}

impl LoadedConfig {
    /// The layers that exist, lowest precedence first (user, then project).
    pub fn layers(&self) -> impl DoubleEndedIterator<Item = &ConfigLayer> {
        self.user.iter().chain(self.project.iter())
    }
}

/// The user's config dir: `$XDG_CONFIG_HOME/subagent` when that is set
/// and absolute, else `$HOME/.config/subagent`; it holds `config.toml` and
/// the user's `agents/`.
pub fn user_config_dir(
    xdg_config_home: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    let xdg = xdg_config_home
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let config = xdg.or_else(|| {
        home.map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .map(|h| h.join(".config"))
    })?;
    Some(config.join("subagent"))
}

/// The user's config file: `config.toml` in [`user_config_dir`].
pub fn user_config_path(
    xdg_config_home: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    user_config_dir(xdg_config_home, home).map(|dir| dir.join("config.toml"))
}

/// [`user_config_path`] from this process's environment.
pub fn default_user_config_path() -> Option<PathBuf> {
    user_config_path(
        std::env::var_os("XDG_CONFIG_HOME"),
        std::env::var_os("HOME"),
    )
}

/// The directories whose `.subagent/` and `.claude/` a run in `workspace`
/// reads, nearest first, and the project's root. The workspace is made
/// canonical (so the trust record's paths and the loaders' are the same
/// whatever symlink led there); the walk goes up to the repository root,
/// the first directory holding `.git` (above it is someone else's
/// project), else to `/`, and then the root is the workspace itself.
pub fn project_dirs(workspace: &Path) -> std::io::Result<(Vec<PathBuf>, PathBuf)> {
    let start = std::fs::canonicalize(workspace).or_else(|_| std::path::absolute(workspace))?;
    let mut dirs = Vec::new();
    let mut root = None;
    for dir in start.ancestors() {
        dirs.push(dir.to_owned());
        if dir.join(".git").exists() {
            root = Some(dir.to_owned());
            break;
        }
    }
    Ok((dirs, root.unwrap_or(start)))
}

/// The nearest `.subagent/config.toml` from `workspace` up to the
/// repository root, if any (trusted or not).
pub fn find_project_config(workspace: &Path) -> Option<PathBuf> {
    let (dirs, _) = project_dirs(workspace).ok()?;
    dirs.into_iter()
        .map(|dir| dir.join(PROJECT_CONFIG))
        .find(|candidate| candidate.is_file())
}

/// Where a new project config for `workspace` would go: the repository
/// root's `.subagent/config.toml`, else the workspace's.
pub fn project_config_home(workspace: &Path) -> PathBuf {
    match project_dirs(workspace) {
        Ok((_, root)) => root.join(PROJECT_CONFIG),
        Err(_) => workspace.join(PROJECT_CONFIG),
    }
}

/// Reads the user's file (`user_path`) and takes the project's from
/// `project`, which read it, when the operator trusted it ([`super::trust`]).
pub fn load_config(
    project: &ProjectConfig,
    user_path: Option<&Path>,
) -> Result<LoadedConfig, ConfigFileError> {
    let user = match user_path {
        Some(path) => read_layer(path)?,
        None => None,
    };
    let project = match project.trusted_config() {
        // The user's file can be the project's when the workspace is home.
        Some(file) if Some(file.path.as_path()) != user_path => Some(ConfigLayer {
            path: file.path.clone(),
            file: parse_config(&file.path, &file.text)?,
        }),
        _ => None,
    };
    Ok(LoadedConfig { user, project })
}

/// The layer at `path`; `None` when there is no file.
fn read_layer(path: &Path) -> Result<Option<ConfigLayer>, ConfigFileError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ConfigFileError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    Ok(Some(ConfigLayer {
        path: path.to_owned(),
        file: parse_config(path, &text)?,
    }))
}
