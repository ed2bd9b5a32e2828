//! Issue 18's file-tool items through the real CLI: the Python interpreter
//! is chosen by the supervisor, not by a file in the workspace, and the
//! session file reports both (the interpreter, and the file tools'
//! Landlock). And the supervisor asks the interpreter only when a model
//! calls `python_execute`, never on a run's path (issue 23).

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::*;

/// The interpreter the test's shims run: `python3` of the system paths,
/// which the confined interpreter question can see (a shim in a test's
/// tmp dir is asked with that dir and the system paths only), as it names
/// itself.
fn real_python() -> String {
    let system = ["/usr/bin/python3", "/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("a python3 in /usr/bin, /bin or /usr/local/bin");
    let out = Command::new(system)
        .args(["-I", "-c", "import sys; print(sys.executable)"])
        .current_dir("/")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A `python3` launcher that picks the version as pyenv's shim does: from
/// `.python-version` in the working directory or a parent. This one knows
/// no version but the real interpreter's, so any such file makes it fail.
fn pyenv_like_shim(dir: &Path, real: &str) {
    let script = format!(
        "#!/bin/sh\n\
         dir=$PWD\n\
         while :; do\n\
         \x20 if [ -f \"$dir/.python-version\" ]; then\n\
         \x20   echo \"pyenv: version '$(cat \"$dir/.python-version\")' is not installed\" >&2; exit 1\n\
         \x20 fi\n\
         \x20 [ \"$dir\" = / ] && break\n\
         \x20 dir=$(dirname \"$dir\")\n\
         done\n\
         exec {real} \"$@\"\n"
    );
    install_shim(dir, &script);
}

/// `dir/python3`, an executable script.
fn install_shim(dir: &Path, script: &str) {
    let shim = dir.join("python3");
    std::fs::write(&shim, script).unwrap();
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// This test's `PATH` with `shims` first.
fn path_with(shims: &Path) -> String {
    format!(
        "{}:{}",
        shims.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// A turn calling `python_execute` to print the interpreter it runs.
fn which_python_turn() -> Vec<u8> {
    tool_call_turn(
        "call_py",
        "python_execute",
        &json!({"code": "import sys; print(sys.executable)"}),
    )
}

#[test]
fn a_python_version_file_in_the_workspace_does_not_choose_the_interpreter() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let shims = tempfile::tempdir().unwrap();
    // What a tool process of an earlier run could have written.
    std::fs::write(workspace.path().join(".python-version"), "bogus-9.9\n").unwrap();
    let real = real_python();
    pyenv_like_shim(shims.path(), &real);
    let path = path_with(shims.path());
    let model = ScriptedModel::start(vec![
        which_python_turn(),
        tool_call_turn(
            "call_read",
            "bash_read",
            &json!({"path": ".python-version"}),
        ),
        text_turn("done"),
    ]);
    // The supervisor started in the workspace, the worst case: a probe that
    // asks from its working directory meets the bogus version.
    let out = model
        .run_command(workspace.path(), sessions.path())
        .current_dir(workspace.path())
        .args(["--timeout", "60", "--json", "--task", "Which Python?"])
        .args(["--tools", "bash_read,python_execute"])
        .env("PATH", path)
        .output()
        .unwrap();
    assert_nothing_runs_in(workspace.path());
    let (_, lines) = checked(&out, 0);

    let header = &lines[0];
    assert_eq!(recorded_python(&lines).as_deref(), Some(real.as_str()));
    let applied = header["sandbox"]["applied"].as_array().unwrap();
    assert!(
        applied.iter().any(|p| p == "file_tools_landlock"),
        "header sandbox: {:#}",
        header["sandbox"]
    );
    let results = of_type(&lines, "tool_result");
    let outputs: Vec<(&str, bool)> = results
        .iter()
        .map(|l| {
            (
                l["output"].as_str().unwrap(),
                l["isError"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(outputs.len(), 2, "{outputs:#?}");
    assert!(
        !outputs[0].1 && outputs[0].0.contains(&real),
        "python_execute: {}",
        outputs[0].0
    );
    assert!(
        !outputs[1].1 && outputs[1].0.contains("bogus-9.9"),
        "bash_read: {}",
        outputs[1].0
    );
}

/// The interpreter the session file names: the header's `python` when it
/// was known at the start, else the log line written once it was.
fn recorded_python(lines: &[serde_json::Value]) -> Option<String> {
    const LATE: &str = "python_execute runs ";
    if let Some(python) = lines[0]["python"].as_str() {
        return Some(python.to_owned());
    }
    of_type(lines, "log").iter().find_map(|l| {
        let message = l["message"].as_str()?;
        let rest = message.strip_prefix(LATE)?;
        Some(
            rest.strip_suffix(" (resolved after the run started)")?
                .to_owned(),
        )
    })
}

/// A `python3` launcher that waits, when asked, until the test writes a
/// line into the FIFO `gate` beside it, then runs the real one. The
/// question is confined (it can write nowhere the test could look), so
/// the FIFO tells: it has a reader only while the launcher is asked.
fn gated_shim(dir: &Path, real: &str) -> PathBuf {
    let gate = dir.join("gate");
    make_fifo(&gate);
    let script = format!(
        "#!/bin/sh\nread line < '{}'\nexec {real} \"$@\"\n",
        gate.display()
    );
    install_shim(dir, &script);
    gate
}

/// Whether the launcher is being asked now: the gate has a reader.
fn gate_has_reader(gate: &Path) -> bool {
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(gate)
        .is_ok()
}

/// Lets the asked launcher go on; false when nobody asked it within
/// `timeout` (the blocking open stays behind on its thread then).
fn open_gate(gate: &Path, timeout: Duration) -> bool {
    let gate = gate.to_owned();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // Blocks until the launcher opens its end.
        let opened = std::fs::OpenOptions::new().write(true).open(&gate);
        let _ = tx.send(opened.and_then(|mut f| f.write_all(b"go\n")).is_ok());
    });
    rx.recv_timeout(timeout).unwrap_or(false)
}

#[test]
fn python3_is_asked_only_once_the_model_calls_python_execute() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let shims = tempfile::tempdir().unwrap();
    let real = real_python();
    let gate = gated_shim(shims.path(), &real);
    let path = path_with(shims.path());
    let model = ScriptedModel::start_held(vec![which_python_turn(), text_turn("done")]);
    let child = model
        .run_command(workspace.path(), sessions.path())
        .args(["--timeout", "60", "--json", "--task", "Which Python?"])
        .args(["--tools", "python_execute"])
        .env("PATH", path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The model is asked, and held: python3 has not been asked, at the
    // start or while the first turn runs (before the fix the supervisor
    // asked at its start and the run waited for the answer).
    let model_asked = model.wait_for_requests(1, Duration::from_secs(30));
    let python_asked_before_the_call = gate_has_reader(&gate);
    model.release();
    let python_asked = open_gate(&gate, Duration::from_secs(60));
    model.release();
    let out = child.wait_with_output().unwrap();
    assert_nothing_runs_in(workspace.path());
    assert_no_survivors(&shims.path().display().to_string());
    assert!(model_asked, "the model was never asked");
    assert!(
        !python_asked_before_the_call,
        "python3 was asked before the model called python_execute"
    );
    assert!(python_asked, "python3 was never asked");
    let (_, lines) = checked(&out, 0);
    assert_eq!(lines[0].get("python"), None, "header: {:#}", lines[0]);
    assert_eq!(recorded_python(&lines).as_deref(), Some(real.as_str()));
    let results = of_type(&lines, "tool_result");
    assert_eq!(results.len(), 1, "{results:#?}");
    let output = results[0]["output"].as_str().unwrap();
    assert!(
        results[0]["isError"] == false && output.contains(&real),
        "python_execute: {output}"
    );
}
