//! What the interpreter question may read, and the check that its answer
//! names nothing beyond that.
//!
//! `python3` is found on `PATH` as `execvp` would find it (absolute entries
//! only). A launcher needs more than its own file: pyenv's shim runs
//! `$PYENV_ROOT/libexec/pyenv` and the interpreter under
//! `$PYENV_ROOT/versions`, a venv's `bin/python3` reads `pyvenv.cfg` beside
//! `bin`. So the question may read, besides the system paths, the
//! *installation root* of the directory `python3` was found in, and of the
//! file it links to when it is a symlink: the directory's parent
//! (`~/.pyenv/shims` gives `~/.pyenv`, `/opt/conda/bin` gives `/opt/conda`),
//! but for a directory below the home directory the entry of the home
//! directory it lies in (`~/.pyenv/plugins/x/shims` gives `~/.pyenv`), and
//! never `/`, the home directory or one of its ancestors, nor a
//! world-writable directory such as `/tmp` (then the directory itself).
//!
//! The answer is checked against the same reach: the executable and every
//! prefix, symlinks resolved, must lie in it or in the system paths. Later
//! tool processes bind the prefixes into their view, so an answer that
//! named `/` or `/etc` (a rewritten shim can print anything) would
//! otherwise widen every later tool's view; here it can name only what
//! the question itself was given to read.
//!
//! This module decides and checks; it starts nothing (`super::question`
//! does).

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use super::Interpreter;
use crate::isolation::SYSTEM_READ_ONLY_PATHS;

/// The `python3` to ask and what it may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Launcher {
    /// The file to run: `python3` in the canonical form of the `PATH`
    /// directory it was found in.
    pub(crate) program: PathBuf,
    /// What the question may read besides the system paths, as the view
    /// binds them (a root as `PATH` spells it is kept when it is a symlink
    /// into the reach, for a launcher that names its own paths so).
    pub(crate) read_only: Vec<PathBuf>,
    /// The canonical directories the question may read: the answer must
    /// lie in them or in the system paths.
    pub(crate) reach: Vec<PathBuf>,
}

/// Finds `python3` on `path_var` and what its launcher may read.
/// `home` is the home directory (`$HOME`), kept out of the reach.
pub(crate) fn find(path_var: Option<&OsStr>, home: Option<&Path>) -> Result<Launcher, String> {
    let home = home.and_then(|h| std::fs::canonicalize(h).ok());
    let home = home.as_deref();
    let dirs = path_var.map(std::env::split_paths).into_iter().flatten();
    for dir in dirs.filter(|d| d.is_absolute()) {
        let candidate = dir.join("python3");
        if !is_executable_file(&candidate) {
            continue;
        }
        let Ok(canonical_dir) = std::fs::canonicalize(&dir) else {
            continue;
        };
        let mut launcher = Launcher {
            program: canonical_dir.join("python3"),
            read_only: Vec::new(),
            reach: Vec::new(),
        };
        launcher.add_root(root_of(&canonical_dir, home), &candidate)?;
        let linked = std::fs::symlink_metadata(&candidate).is_ok_and(|m| m.is_symlink());
        if linked
            && let Ok(target) = std::fs::canonicalize(&candidate)
            && let Some(target_dir) = target.parent()
        {
            launcher.add_root(root_of(target_dir, home), &candidate)?;
        }
        if dir != canonical_dir {
            // As PATH spells it: the view makes it a symlink into the reach.
            let lexical = root_of(&dir, home);
            if std::fs::canonicalize(&lexical).is_ok_and(|c| launcher.within_reach(&c)) {
                launcher.read_only.push(lexical);
            }
        }
        return Ok(launcher);
    }
    Err(
        "python3 is not on the supervisor's PATH (absolute directories only); install Python 3 \
         and put the directory of python3 on the PATH the supervisor starts with"
            .to_owned(),
    )
}

impl Launcher {
    fn add_root(&mut self, root: PathBuf, found: &Path) -> Result<(), String> {
        if root == Path::new("/") {
            return Err(format!(
                "python3 ({}) would need the whole filesystem to be asked where it lives; put a \
                 python3 that lives in a directory of its own first on the supervisor's PATH",
                found.display()
            ));
        }
        if !self.within_reach(&root) {
            self.reach.retain(|r| !r.starts_with(&root));
            self.reach.push(root.clone());
            self.read_only.retain(|r| !r.starts_with(&root));
            self.read_only.push(root);
        }
        Ok(())
    }

    fn within_reach(&self, path: &Path) -> bool {
        self.reach.iter().any(|r| path.starts_with(r))
    }

    /// `answer` when its executable and every prefix, symlinks resolved,
    /// lie within the reach or the system paths; else why not (said so
    /// the operator can act).
    pub(crate) fn check(&self, answer: Interpreter) -> Result<Interpreter, String> {
        let system: Vec<PathBuf> = SYSTEM_READ_ONLY_PATHS
            .iter()
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .collect();
        let allowed = |path: &Path| {
            path != Path::new("/")
                && (self.within_reach(path) || system.iter().any(|s| path.starts_with(s)))
        };
        for (what, path) in std::iter::once(("executable", &answer.executable))
            .chain(answer.prefixes.iter().map(|p| ("prefix", p)))
        {
            let canonical = std::fs::canonicalize(path).map_err(|e| {
                format!(
                    "python3 named its {what} {} but that path cannot be resolved ({e}); put a \
                     working python3 first on the supervisor's PATH",
                    path.display()
                )
            })?;
            if !path.is_absolute() || !allowed(&canonical) {
                return Err(format!(
                    "python3 ({}) named its {what} {} (leading to {}), outside what it was given \
                     to read ({} and the system paths); a launcher that was rewritten may say so. \
                     Check {} and put a trusted python3 first on the supervisor's PATH",
                    self.program.display(),
                    path.display(),
                    canonical.display(),
                    self.describe_reach(),
                    self.program.display(),
                ));
            }
            if what == "executable" && !canonical.is_file() {
                return Err(format!(
                    "python3 named its executable {}, which is not a file; put a working python3 \
                     first on the supervisor's PATH",
                    path.display()
                ));
            }
        }
        Ok(answer)
    }

    /// The reach as the operator reads it.
    pub(crate) fn describe_reach(&self) -> String {
        self.reach
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The installation root of `dir` (see the module doc).
fn root_of(dir: &Path, home: Option<&Path>) -> PathBuf {
    if let Some(home) = home
        && dir != home
        && let Ok(below) = dir.strip_prefix(home)
        && let Some(Component::Normal(first)) = below.components().next()
    {
        return home.join(first);
    }
    let parent = match dir.parent() {
        Some(parent) if parent != Path::new("/") && !world_writable(parent) => parent,
        _ => dir,
    };
    if home.is_some_and(|h| h.starts_with(parent)) {
        dir.to_owned()
    } else {
        parent.to_owned()
    }
}

fn world_writable(dir: &Path) -> bool {
    std::fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o002 != 0)
}

fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
#[path = "reach_tests.rs"]
mod tests;
