//! Finding the Python interpreter a tool process runs, and the directories
//! it needs to read (its prefixes), once per process.
//!
//! `python3` is looked up on `PATH` and asked where it really lives: on many
//! machines `python3` is a launcher (pyenv's shims, a venv's symlink) whose
//! real files sit outside the system paths the tool sandbox allows. The
//! answer is cached; the question runs trusted, fixed code, never the
//! model's.
//!
//! The question is asked with `/` as the working directory, never a
//! workspace: a launcher picks the version from the working directory's
//! files (pyenv reads `.python-version` there and in every parent), and a
//! workspace's files are written by tool processes. The supervisor asks
//! once, when a model first calls `python_execute`, and hands the answer
//! to its workers (in the task, `TaskSpec::python`, or after it,
//! `ToWorker::Python`), so a file a tool writes can never choose the
//! interpreter of a later run. Here because both the supervisor and the
//! tool that spawns the interpreter need it, and the sandbox is the crate
//! both depend on.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::sync::OnceCell;

/// Longest the interpreter may take to say where it lives: a cold start
/// of a launcher like pyenv takes well under a second.
const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

/// The working directory of the probe: no workspace, and nothing a tool
/// process can write.
const NEUTRAL_DIR: &str = "/";

/// What the probe asks the interpreter.
const PROBE_CODE: &str = "import sys, json; print(json.dumps([sys.executable, sys.prefix, \
     sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]))";

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
    let mut command = tokio::process::Command::new("python3");
    command
        .args(["-I", "-c", PROBE_CODE])
        .current_dir(NEUTRAL_DIR)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let output = match tokio::time::timeout(PROBE_TIMEOUT, command.output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => {
            return Err(format!(
                "python3 cannot be started ({e}); install Python 3 and put python3 on the worker's PATH"
            ));
        }
        Err(_) => {
            return Err(format!(
                "python3 did not answer within {} s when asked where it lives",
                PROBE_TIMEOUT.as_secs()
            ));
        }
    };
    if !output.status.success() {
        return Err(format!(
            "python3 failed when asked where it lives ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    parse_probe(&String::from_utf8_lossy(&output.stdout))
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
#[path = "interpreter_tests.rs"]
mod tests;
