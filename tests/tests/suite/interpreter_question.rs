//! Issue 32: the interpreter question runs confined. With the home
//! directory as the workspace and its `~/.pyenv/shims` on `PATH`, a tool
//! rewrote the shim, and the next run's question (the supervisor asks
//! `python3` where it lives when a model first calls `python_execute`) ran
//! the rewritten shim on the host, unsandboxed, as the supervisor's user.
//! Such a workspace is now refused at admission (`workspace_refused.rs`);
//! this is the wall behind that one: a shim rewritten all the same (by a
//! run from before that refusal, another program, a shared home) runs
//! confined when the question asks it. The test plants the rewritten shim
//! itself after checking that a home workspace is refused, then a real
//! `subagent run` in another workspace asks it; the shim writes outside
//! the workspace and into its own directory when it runs, and neither
//! write may land.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::json;

use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::*;

/// A python3 of the system paths, which a confined question can see, and
/// the file it links to (`/usr/bin/python3 -> python3.11`); `None` when
/// the machine has no such pair.
fn system_python() -> Option<(PathBuf, PathBuf)> {
    ["/usr/bin/python3", "/bin/python3", "/usr/local/bin/python3"]
        .iter()
        .map(PathBuf::from)
        .find_map(|link| {
            let real = std::fs::canonicalize(&link).ok()?;
            (real != link).then_some((link, real))
        })
}

/// `subagent run` of a `python_execute` of `code` in `workspace`, with
/// `home` as HOME and its shims first on PATH.
fn run_in(workspace: &Path, home: &Path, sessions: &Path, code: &str) -> Output {
    binary("subagent");
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_py", "python_execute", &json!({ "code": code })),
        text_turn("done"),
    ]);
    let path = format!(
        "{}:{}",
        home.join(".pyenv/shims").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    model
        .run_command(workspace, sessions)
        .args(["--timeout", "60", "--json", "--task", "Go."])
        .args(["--tools", "python_execute"])
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .env("PATH", path)
        .output()
        .unwrap()
}

/// The one python_execute result of a run's session lines.
fn tool_output(out: &Output) -> String {
    let (_, lines) = checked(out, 0);
    let results = of_type(&lines, "tool_result");
    assert_eq!(results.len(), 1, "{results:#?}");
    results[0]["output"].as_str().unwrap().to_owned()
}

#[test]
fn a_shim_a_tool_rewrote_in_the_home_workspace_runs_confined_when_asked() {
    let Some((python, real)) = system_python() else {
        eprintln!("skipped: no python3 symlink in the system paths");
        return;
    };
    let top = tempfile::tempdir().unwrap();
    let home = top.path().join("home");
    let outside = top.path().join("outside");
    let sessions = top.path().join("sessions");
    let work = top.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let shims = home.join(".pyenv/shims");
    std::fs::create_dir_all(&shims).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let shim = shims.join("python3");
    std::fs::write(
        &shim,
        format!("#!/bin/sh\nexec {} \"$@\"\n", python.display()),
    )
    .unwrap();
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();

    // The attack as it was: a home workspace whose shim a tool could
    // rewrite is refused before any tool runs.
    let refused = run_in(&home, &home, &sessions, "print('ran')");
    assert_eq!(
        refused.status.code(),
        Some(2),
        "a home workspace holding a PATH dir was not refused: {}",
        String::from_utf8_lossy(&refused.stdout)
    );

    // The shim rewritten all the same. Run as the question, it writes on
    // the host outside the workspace and beside itself, then runs the
    // interpreter by its other name, so the run shows which shim answered.
    let planted_outside = outside.join("written-by-the-shim");
    let planted_beside = shims.join("written-by-the-shim");
    let rewritten = format!(
        "#!/bin/sh\nid > {} 2>/dev/null\nid > {} 2>/dev/null\nexec {} \"$@\"\n",
        planted_outside.display(),
        planted_beside.display(),
        real.display()
    );
    std::fs::write(&shim, &rewritten).unwrap();
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();

    // A new supervisor: its question runs the rewritten shim.
    let second = tool_output(&run_in(
        &work,
        &home,
        &sessions,
        "import sys; print(sys.executable)",
    ));
    assert_nothing_runs_in(&home);
    assert_nothing_runs_in(&work);
    assert_no_survivors(&shims.display().to_string());
    assert!(
        second.contains(&real.display().to_string()),
        "run 2 did not run the interpreter the rewritten shim chose: {second}"
    );
    assert!(
        !planted_outside.exists(),
        "the rewritten shim wrote outside the workspace on the host: {:?}",
        std::fs::read_to_string(&planted_outside)
    );
    assert!(
        !planted_beside.exists(),
        "the rewritten shim wrote beside itself: {:?}",
        std::fs::read_to_string(&planted_beside)
    );
}
