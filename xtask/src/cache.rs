//! Versioned, all-or-nothing cache entries.
//!
//! An entry is a directory `<root>/<name>` (the name carries the version). It
//! is filled in a private temporary directory `<root>/.tmp-<name>.<pid>` and
//! renamed into place only when complete, so an interrupted build leaves no
//! half entry: the next run sees no entry, removes the dead run's temporary
//! directory and starts over. A present entry is never rebuilt.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// One cache entry.
#[derive(Debug, Clone)]
pub struct Entry {
    root: PathBuf,
    name: String,
}

impl Entry {
    /// The entry `<root>/<name>`.
    pub fn new(root: &Path, name: impl Into<String>) -> Self {
        Self {
            root: root.to_path_buf(),
            name: name.into(),
        }
    }

    /// Where the entry lives once complete.
    pub fn path(&self) -> PathBuf {
        self.root.join(&self.name)
    }

    /// True when the entry is complete.
    pub fn exists(&self) -> bool {
        self.path().is_dir()
    }

    /// Returns the entry, filling it first with `fill(temp_dir)` if absent.
    pub fn get_or_fill(&self, fill: impl FnOnce(&Path) -> Result<()>) -> Result<PathBuf> {
        let path = self.path();
        if path.is_dir() {
            return Ok(path);
        }
        std::fs::create_dir_all(&self.root)
            .with_context(|| format!("create cache directory {}", self.root.display()))?;
        self.remove_abandoned_temp_dirs();
        let temp = self
            .root
            .join(format!(".tmp-{}.{}", self.name, std::process::id()));
        if temp.exists() {
            std::fs::remove_dir_all(&temp)
                .with_context(|| format!("remove stale {}", temp.display()))?;
        }
        std::fs::create_dir(&temp).with_context(|| format!("create {}", temp.display()))?;
        if let Err(e) = fill(&temp) {
            // Best effort: the error that matters is the fill's.
            let _ = std::fs::remove_dir_all(&temp);
            return Err(e);
        }
        match std::fs::rename(&temp, &path) {
            Ok(()) => Ok(path),
            // Another run completed the same entry first: keep theirs.
            Err(_) if path.is_dir() => {
                let _ = std::fs::remove_dir_all(&temp);
                Ok(path)
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&temp);
                Err(e).with_context(|| format!("move {} into place", path.display()))
            }
        }
    }

    /// Removes `.tmp-<name>.<pid>` directories whose process is gone.
    fn remove_abandoned_temp_dirs(&self) {
        let prefix = format!(".tmp-{}.", self.name);
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return;
        };
        for entry in entries.flatten() {
            let file_name = entry.file_name();
            let Some(pid) = file_name
                .to_str()
                .and_then(|n| n.strip_prefix(&prefix))
                .and_then(|pid| pid.parse::<u32>().ok())
            else {
                continue;
            };
            let alive = Path::new("/proc").join(pid.to_string()).exists();
            if !alive {
                eprintln!(
                    "xtask: removing {} left by an interrupted run",
                    entry.path().display()
                );
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
