//! Finding the Python interpreter a tool process runs, and the directories
//! it needs to read (its prefixes), once per process.
//!
//! `python3` is looked up on `PATH` and asked where it really lives: on many
//! machines `python3` is a launcher (pyenv's shims, a venv's symlink) whose
//! real files sit outside the system paths the tool sandbox allows. The
//! answer is cached.
//!
//! The question runs under the tool sandbox ([`question`]), reading only
//! the system paths and the launcher's installation root ([`reach`]), and
//! its answer may name only what it could read: a launcher in a directory
//! a tool process can write (the home directory as a workspace holds
//! `~/.pyenv/shims`) runs confined at worst. It is asked with the view's
//! `/` as the working directory, never a workspace: a launcher picks the
//! version from the working directory's files (pyenv reads
//! `.python-version` there and in every parent). The supervisor asks once,
//! when a model first calls `python_execute`, and hands the answer to its
//! workers (in the task, `TaskSpec::python`, or after it,
//! `ToWorker::Python`), so a file a tool writes can never choose the
//! interpreter of a later run. Here because both the supervisor and the
//! tool that spawns the interpreter need it, and the sandbox is the crate
//! both depend on.

mod question;
mod reach;

use std::path::PathBuf;

use tokio::sync::OnceCell;

/// A Python interpreter and the directories it reads at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interpreter {
    /// The real executable (not a launcher script).
    pub executable: PathBuf,
    /// `sys.prefix`, `sys.base_prefix` and the exec prefixes, deduplicated.
    pub prefixes: Vec<PathBuf>,
}

static INTERPRETER: OnceCell<Result<Interpreter, String>> = OnceCell::const_new();

/// The interpreter `python3` on this process's `PATH` resolves to, or why
/// there is none (said so the model and the operator can act on it).
pub async fn python_interpreter() -> Result<&'static Interpreter, &'static str> {
    INTERPRETER
        .get_or_init(probe)
        .await
        .as_ref()
        .map_err(String::as_str)
}

/// [`python_interpreter`]'s answer when the question has been answered
/// already; `None` while it is still being asked (or never was), so a
/// caller that must not wait for it can go on and take the answer later.
pub fn python_interpreter_if_known() -> Option<Result<&'static Interpreter, &'static str>> {
    INTERPRETER
        .get()
        .map(|found| found.as_ref().map_err(String::as_str))
}

async fn probe() -> Result<Interpreter, String> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let launcher = reach::find(std::env::var_os("PATH").as_deref(), home.as_deref())?;
    let answer = question::ask(&launcher).await?;
    launcher.check(parse_probe(&answer)?)
}

/// Reads the probe's JSON line: `[executable, prefix, ...]`.
pub fn parse_probe(text: &str) -> Result<Interpreter, String> {
    let paths: Vec<String> = serde_json::from_str(text.trim())
        .map_err(|e| format!("python3 gave an unreadable answer ({e}): {text:?}"))?;
    let mut paths = paths
        .into_iter()
        .filter(|p| !p.is_empty())
        .map(PathBuf::from);
    let executable = paths.next().ok_or_else(|| {
        "python3 does not know its own executable (sys.executable is empty)".to_owned()
    })?;
    let mut prefixes: Vec<PathBuf> = Vec::new();
    for prefix in paths {
        if !prefixes.contains(&prefix) {
            prefixes.push(prefix);
        }
    }
    Ok(Interpreter {
        executable,
        prefixes,
    })
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
