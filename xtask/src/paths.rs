//! Where things are: the repository root, cargo's target dir and the build cache.
//!
//! The cache lives outside the repository so that a fresh clone, `cargo
//! clean` or `git clean` never throws away a 10-minute llama.cpp build.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The repository root (the parent of `xtask/`).
pub fn repo_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| manifest_dir.to_path_buf())
}

fn env_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The cache root: `$SUBAGENT_CACHE_DIR`, else `$XDG_CACHE_HOME/subagent`,
/// else `~/.cache/subagent`; always absolute.
pub fn cache_root() -> Result<PathBuf> {
    let root = if let Some(dir) = env_dir("SUBAGENT_CACHE_DIR") {
        dir
    } else if let Some(dir) = env_dir("XDG_CACHE_HOME") {
        dir.join("subagent")
    } else {
        env_dir("HOME")
            .context(
                "no cache directory: set SUBAGENT_CACHE_DIR (or XDG_CACHE_HOME or HOME) \
                 to a writable directory outside the repository",
            )?
            .join(".cache/subagent")
    };
    if root.is_absolute() {
        Ok(root)
    } else {
        Ok(std::env::current_dir()
            .context("read the current directory to make the cache path absolute")?
            .join(root))
    }
}

/// Cargo's target directory, where `cargo build` put the binaries: not
/// always `<root>/target`, since `CARGO_TARGET_DIR` or `build.target-dir`
/// move it, and only cargo knows which applies.
pub fn target_dir(root: &Path) -> Result<PathBuf> {
    let metadata = crate::cmd::stdout_of(crate::cmd::cargo().current_dir(root).args([
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
    ]))?;
    let metadata: serde_json::Value =
        serde_json::from_str(&metadata).context("`cargo metadata` printed no JSON")?;
    metadata["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .context("`cargo metadata` names no target_directory")
}
