//! The user's own configuration when a run's workspace holds it.
//!
//! A tool process may write anywhere in its workspace. When the workspace
//! is the home directory (or any directory above the user's config dir),
//! that would let one tool call rewrite `config.toml`, the user's agent
//! files and the trust record (`trusted.json`), which every later run
//! obeys. This room names that directory so the tool sandbox binds it
//! read-only (`TaskSpec::protected_paths`); the workspace's own
//! `.subagent`, `.claude` and `.git` are protected by the sandbox itself.
//!
//! It reads the environment and may create the (empty) config dir: a dir
//! that does not exist cannot be bound, and a tool could then create it.
//! It never writes a file.

use std::path::{Path, PathBuf};

use super::locations::user_config_dir;

/// The user's config dir, when it lies inside `workspace` (made if
/// missing, so the sandbox can bind it read-only); empty otherwise.
pub fn protected_config_dirs(workspace: &Path) -> Vec<PathBuf> {
    let Some(config_dir) = user_config_dir(
        std::env::var_os("XDG_CONFIG_HOME"),
        std::env::var_os("HOME"),
    ) else {
        return Vec::new();
    };
    let Some(inside) = config_dir_inside(workspace, &config_dir) else {
        return Vec::new();
    };
    if let Err(e) = std::fs::create_dir_all(&inside) {
        tracing::warn!(
            dir = %inside.display(),
            "cannot create the user config dir inside the workspace, so tools could create it: {e}"
        );
    }
    vec![inside]
}

/// `config_dir` as it will be seen, when it lies strictly inside
/// `workspace`. Both are resolved through what exists of them (symlinks,
/// `..`), so a workspace reached through a symlink still matches.
pub(crate) fn config_dir_inside(workspace: &Path, config_dir: &Path) -> Option<PathBuf> {
    let workspace = workspace.canonicalize().ok()?;
    let config_dir = resolve_existing_prefix(config_dir)?;
    (config_dir.starts_with(&workspace) && config_dir != workspace).then_some(config_dir)
}

/// `path` with its deepest existing ancestor made canonical and the rest
/// (which does not exist yet) appended as it is.
fn resolve_existing_prefix(path: &Path) -> Option<PathBuf> {
    let mut missing = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            let mut resolved = canonical;
            resolved.extend(missing.iter().rev());
            return Some(resolved);
        }
        missing.push(existing.file_name()?);
        existing = existing.parent()?;
    }
}

#[cfg(test)]
#[path = "protect_tests.rs"]
mod tests;
