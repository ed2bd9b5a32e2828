//! One `python_execute` call of a test's code through the real CLI
//! (`subagent run` against a scripted model), for the tests that attack
//! the tool sandbox from inside a tool: what the tool printed, and the
//! run's session lines. [`process_call`] makes the same call through either
//! process tool: `bash` runs the same Python as `python3` from its shell,
//! so one attack covers both tools' sandbox.
//!
//! It runs one call and reads back what it left; what the call may reach
//! is for each test to assert.

use std::path::Path;

use serde_json::{Value, json};

use super::run_output::{checked, tool_output};
use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::{assert_nothing_runs_in, binary};

/// The tools that run a process in the tool sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessTool {
    /// `python_execute`: the code as it is.
    Python,
    /// `bash`: the code run by `python3` from the shell.
    Bash,
}

impl ProcessTool {
    /// Both, for the attacks each must hold against.
    pub const ALL: [ProcessTool; 2] = [ProcessTool::Python, ProcessTool::Bash];

    /// Its name and the arguments that run `code`.
    fn call(self, code: &str) -> (&'static str, Value) {
        match self {
            ProcessTool::Python => ("python_execute", json!({ "code": code })),
            ProcessTool::Bash => (
                "bash",
                json!({ "command": format!("python3 - <<'SUBAGENT_EOF'\n{code}\nSUBAGENT_EOF") }),
            ),
        }
    }
}

/// Runs one `python_execute` call of `code` in `workspace` (sessions in a
/// directory of their own, timeout 60 s): the tool's output and the
/// session lines of a run that exited 0 and left nothing running.
pub fn python_call(workspace: &Path, code: &str) -> (String, Vec<Value>) {
    python_call_with(workspace, code, &[])
}

/// [`python_call`] with more flags for the run.
pub fn python_call_with(workspace: &Path, code: &str, extra: &[&str]) -> (String, Vec<Value>) {
    process_call_with(ProcessTool::Python, workspace, code, extra)
}

/// [`python_call`] through `tool`.
pub fn process_call(tool: ProcessTool, workspace: &Path, code: &str) -> (String, Vec<Value>) {
    process_call_with(tool, workspace, code, &[])
}

/// [`process_call`] with more flags for the run.
pub fn process_call_with(
    tool: ProcessTool,
    workspace: &Path,
    code: &str,
    extra: &[&str],
) -> (String, Vec<Value>) {
    // Built (when stale) before the model's server starts its lifetime.
    binary("subagent");
    let sessions = tempfile::tempdir().unwrap();
    let (name, arguments) = tool.call(code);
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_py", name, &arguments),
        text_turn("done"),
    ]);
    let out = model
        .run_command(workspace, sessions.path())
        .args(["--timeout", "60", "--json"])
        .args(["--tools", name, "--task", "Try it."])
        .args(extra)
        .output()
        .unwrap();
    // The worker and its tool processes ran in the workspace: once the CLI
    // has returned, none may be left.
    assert_nothing_runs_in(workspace);
    let (_, lines) = checked(&out, 0);
    (tool_output(&lines), lines)
}

/// Python that runs each `(name, statement)` and prints `name ok`, or
/// `name` and the exception's type and message.
pub fn python_tries<S: AsRef<str>>(attempts: &[(&str, S)]) -> String {
    let mut code = String::from("import os, glob, socket, ctypes, shutil\n");
    for (name, statement) in attempts {
        code.push_str(&format!(
            "try:\n    {}\n    print({name:?}, 'ok')\nexcept Exception as e:\n    print({name:?}, type(e).__name__, e)\n",
            statement.as_ref()
        ));
    }
    code
}
