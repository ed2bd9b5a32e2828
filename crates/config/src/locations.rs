//! Where config files are: the user's config dir and file, a workspace's
//! project directories and its project config. Paths only: it reads no
//! config file (only whether one exists) and trusts nothing; below both
//! the loader ([`super::load`]) and the trust check ([`super::trust`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The project config's place relative to a project directory.
pub const PROJECT_CONFIG: &str = ".subagent/config.toml";

pub use subagent_session::user_dirs::user_config_dir;

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
