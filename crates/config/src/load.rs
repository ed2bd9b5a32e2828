//! Where config files are and reading them: the user's
//! (`$XDG_CONFIG_HOME/subagent/config.toml`, else
//! `~/.config/subagent/config.toml`) and the project's (the nearest
//! `.subagent/config.toml` from the workspace up to the repository root,
//! the same walk as agent files, taken only when the operator trusted the
//! project: `trust.rs`). A file that does not exist is no layer;
//! one that exists and is malformed is an error, since running with half a
//! configuration would surprise more than stopping.
//!
//! The user's file is opened as one read back
//! ([`subagent_session::untrusted_file`]): a link, a FIFO or a file over
//! [`CONFIG_FILE_CAP`] refuses the run, naming the file, before a byte of
//! it is read.
//!
//! It reads files; it never writes them and never reads the environment
//! (the caller passes the variables, so tests never see the real home).

use std::path::{Path, PathBuf};

use super::file::{ConfigFile, ConfigFileError, parse_config};
use super::read_caps::CONFIG_FILE_CAP;
use super::trust::ProjectConfig;
use subagent_session::untrusted_file::{UntrustedFileError, read_capped_string};

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
    let text = match read_capped_string(path, CONFIG_FILE_CAP) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(None),
        Err(UntrustedFileError::Io { path, source }) => {
            return Err(ConfigFileError::Read { path, source });
        }
        Err(refused) => return Err(ConfigFileError::Untrusted(refused)),
    };
    Ok(Some(ConfigLayer {
        path: path.to_owned(),
        file: parse_config(path, &text)?,
    }))
}
