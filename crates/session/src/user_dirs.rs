//! Where the user's own files are: the config dir, which holds
//! `config.toml`, the user's `agents/` and the session files' key. Paths
//! only: reads nothing, creates nothing.

use std::ffi::OsString;
use std::path::PathBuf;

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
