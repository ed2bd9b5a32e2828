//! Issue 18's file-tool items through the real CLI: the Python interpreter
//! is chosen by the supervisor, not by a file in the workspace, and the
//! session header reports both (the interpreter, and the file tools'
//! Landlock).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::*;
use super::tools_e2e::{checked, of_type};

/// The interpreter `python3` on this test's PATH really is, asked from `/`.
fn real_python() -> String {
    let out = Command::new("python3")
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
    let shim = dir.join("python3");
    std::fs::write(&shim, script).unwrap();
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
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
    let path = format!(
        "{}:{}",
        shims.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let model = ScriptedModel::start(vec![
        tool_call_turn(
            "call_py",
            "python_execute",
            &json!({"code": "import sys; print(sys.executable)"}),
        ),
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
    assert_eq!(header["python"], real, "header: {header:#}");
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
