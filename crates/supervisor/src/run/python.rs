//! The Python interpreter a child's tool processes run, resolved by the
//! supervisor, once per process, outside any workspace.
//!
//! The worker runs with the workspace as its working directory, and a
//! launcher such as pyenv's shim picks the interpreter from the working
//! directory's `.python-version`: asked there, a file a tool process wrote
//! would choose the interpreter of every later run. So the supervisor asks
//! (from `/`, see `subagent_sandbox::interpreter`) once, starting when it
//! is made ([`prewarm`]), keeps the answer for its whole life, and hands
//! it to each worker in the task. This module must not ask from anywhere a
//! tool can write.
//!
//! No run waits for the question: a child started while it is still being
//! asked gets [`PythonInterpreter::Pending`] in its task, and the answer
//! later ([`resolved`], sent by the watch loop as `ToWorker::Python`).
//! Through pyenv's shim the question takes 0.1 to 0.4 s, which every
//! first run of a CLI process paid before its first model turn
//! (BENCHMARKS.md, `llama.batch15_per_task`).

use std::path::Path;

use subagent_protocol::PythonInterpreter;
use subagent_protocol::tool_names::PYTHON_EXECUTE;
use subagent_sandbox::Interpreter;

/// Starts resolving the interpreter now, on the caller's tokio runtime when
/// there is one, so the first child that may run `python_execute` finds
/// it done or nearly: through pyenv's shim the question takes 0.2 to
/// 0.3 s. Without a runtime, the first such child asks.
pub(crate) fn prewarm() {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async {
            // Kept by subagent_sandbox for the life of the process.
            let _ = subagent_sandbox::python_interpreter().await;
        });
    }
}

/// The interpreter for a child offered `tools`: `None` when none of them
/// runs Python, [`PythonInterpreter::Pending`] while the question is still
/// being asked (the watch loop then sends [`resolved`]'s answer).
pub(super) fn for_tools(tools: &[String]) -> Option<PythonInterpreter> {
    if !tools.iter().any(|t| t == PYTHON_EXECUTE) {
        return None;
    }
    Some(
        subagent_sandbox::python_interpreter_if_known().map_or(PythonInterpreter::Pending, as_sent),
    )
}

/// The interpreter once the question is answered (asking it if nobody has
/// yet); never [`PythonInterpreter::Pending`].
pub(super) async fn resolved() -> PythonInterpreter {
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
