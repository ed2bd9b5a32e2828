//! The Python interpreter a child's tool processes run, resolved by the
//! supervisor, once per process, outside any workspace.
//!
//! The worker runs with the workspace as its working directory, and a
//! launcher such as pyenv's shim picks the interpreter from the working
//! directory's `.python-version`: asked there, a file a tool process wrote
//! would choose the interpreter of every later run. So the supervisor asks
//! (from `/`, confined as a tool process is, see
//! `subagent_sandbox::interpreter`) once, keeps the answer for its whole
//! life, and hands it to each worker. This module must not ask from
//! anywhere a tool can write, nor outside the tool sandbox.
//!
//! It asks only when a model first calls `python_execute`, never on a
//! run's path: a child started before the answer is in gets
//! [`PythonInterpreter::Pending`] in its task, and the answer
//! ([`resolved`]) is sent as `ToWorker::Python` once its model calls the
//! tool (the watch loop, `Watch::python_pending`). Through pyenv's shim the question is
//! 90 ms of bash scripts, and asked at every start it cost each CLI
//! process that much CPU beside the model server's, before or during its
//! first turn (BENCHMARKS.md, `llama.batch15_per_task`).

use std::path::Path;

use subagent_protocol::PythonInterpreter;
use subagent_protocol::tool_names::PYTHON_EXECUTE;
use subagent_sandbox::Interpreter;

/// The interpreter for a child offered `tools`: `None` when none of them
/// runs Python, [`PythonInterpreter::Pending`] until the question has been
/// answered (the watch loop then sends [`resolved`]'s answer when the
/// model calls the tool).
pub(in crate::run) fn for_tools(tools: &[String]) -> Option<PythonInterpreter> {
    if !tools.iter().any(|t| t == PYTHON_EXECUTE) {
        return None;
    }
    Some(
        subagent_sandbox::python_interpreter_if_known().map_or(PythonInterpreter::Pending, as_sent),
    )
}

/// The interpreter once the question is answered (asking it if nobody has
/// yet); never [`PythonInterpreter::Pending`].
pub(in crate::run) async fn resolved() -> PythonInterpreter {
    as_sent(subagent_sandbox::python_interpreter().await)
}

fn as_sent(found: Result<&Interpreter, &str>) -> PythonInterpreter {
    let found = match found {
        Ok(found) => found,
        Err(reason) => {
            return PythonInterpreter::Missing {
                reason: reason.to_owned(),
            };
        }
    };
    // The task carries strings; a path that is not UTF-8 would arrive
    // changed, so it is refused rather than mangled.
    let text = |path: &Path| path.to_str().map(str::to_owned);
    let prefixes: Option<Vec<String>> = found.prefixes.iter().map(|p| text(p)).collect();
    match (text(&found.executable), prefixes) {
        (Some(executable), Some(prefixes)) => PythonInterpreter::Found {
            executable,
            prefixes,
        },
        _ => PythonInterpreter::Missing {
            reason: format!(
                "the Python interpreter's paths are not UTF-8 ({}); put a python3 with UTF-8 \
                 paths first on the supervisor's PATH",
                found.executable.display()
            ),
        },
    }
}
