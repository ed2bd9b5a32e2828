//! Where config files are and reading them: the user's
//! (`$XDG_CONFIG_HOME/subagent/config.toml`, else
//! `~/.config/subagent/config.toml`) and the project's (the nearest
//! `.subagent/config.toml` from the workspace up to the repository root,
//! the same walk as agent files). A file that does not exist is no layer;
//! one that exists and is malformed is an error, since running with half a
//! configuration would surprise more than stopping.
//!
//! It reads files; it never writes them and never reads the environment
//! (the caller passes the variables, so tests never see the real home).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::file::{ConfigFile, ConfigFileError, parse_config};

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

/// The nearest `.subagent/config.toml` from `workspace` up to the
/// repository root (the first directory holding `.git`), if any.
pub fn find_project_config(workspace: &Path) -> Option<PathBuf> {
    let start = std::path::absolute(workspace).ok()?;
    for dir in start.ancestors() {
        let candidate = dir.join(PROJECT_CONFIG);
        if candidate.is_file() {
            return Some(candidate);
        }
        if dir.join(".git").exists() {
            break;
        }
    }
    None
}

/// Where a new project config for `workspace` would go: the repository
/// root's `.subagent/config.toml`, else the workspace's.
pub fn project_config_home(workspace: &Path) -> PathBuf {
    let start = std::path::absolute(workspace).unwrap_or_else(|_| workspace.to_owned());
    let root = start
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(&start)
        .to_owned();
    root.join(PROJECT_CONFIG)
}

/// Reads the user's file (`user_path`) and the project's for `workspace`.
pub fn load_config(
    workspace: &Path,
    user_path: Option<&Path>,
) -> Result<LoadedConfig, ConfigFileError> {
    let user = match user_path {
        Some(path) => read_layer(path)?,
        None => None,
    };
    let project = match find_project_config(workspace) {
        // The user's file can be the project's when the workspace is home.
        Some(path) if Some(path.as_path()) != user_path => read_layer(&path)?,
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
