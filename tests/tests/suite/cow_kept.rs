//! Changes kept for later (`--apply never`): the workspace is untouched
//! when the run ends, `subagent diff RUN` shows them, `subagent apply RUN
//! --dry-run` says what would happen and changes nothing, `subagent apply
//! RUN` lands them with the rules of a run's end (a file changed since the
//! run started is a conflict and keeps its content), and a run without
//! kept changes is refused with what to do.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::cow::{result_of, run_code, snapshot};
use super::support::*;

fn kept(command: &str, run: &str, sessions: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(binary("subagent"))
        .args([command, run])
        .arg("--sessions-dir")
        .arg(sessions)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn apply_never_keeps_the_changes_for_diff_and_apply() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let ws = workspace.path();
    std::fs::write(ws.join("edit.txt"), "one\ntwo\n").unwrap();
    std::fs::write(ws.join("later.txt"), "v1\n").unwrap();
    let before = snapshot(ws);
    let code = "open('edit.txt', 'w').write('one\\nTWO\\n')\n\
                open('later.txt', 'w').write('the run\\'s\\n')\n\
                open('new.txt', 'w').write('new\\n')";
    let out = run_code(ws, sessions.path(), code, &["--apply", "never"]);
    let result = result_of(&out);
    assert_eq!(snapshot(ws), before, "--apply never changed the workspace");
    let changes = &result["details"]["results"][0]["changes"];
    assert!(changes["layer"].is_string(), "{changes}");
    let run = result["details"]["runId"].as_str().unwrap().to_owned();

    let diff = kept("diff", &run, sessions.path(), &[]);
    let text = String::from_utf8_lossy(&diff.stdout);
    assert_eq!(diff.status.code(), Some(0), "{text}");
    assert!(text.contains("-two\n+TWO"), "{text}");
    assert!(text.contains("+++ b/new.txt"), "{text}");

    let dry = kept("apply", &run, sessions.path(), &["--dry-run", "--json"]);
    let dry_json: Value = serde_json::from_slice(&dry.stdout).unwrap();
    assert_eq!(
        dry_json["applied"].as_array().unwrap().len(),
        3,
        "{dry_json}"
    );
    assert_eq!(snapshot(ws), before, "--dry-run changed the workspace");

    // Someone edits one file after the run: it stays theirs.
    std::fs::write(ws.join("later.txt"), "someone else's\n").unwrap();
    let applied = kept("apply", &run, sessions.path(), &["--json"]);
    assert_eq!(applied.status.code(), Some(1), "{applied:?}");
    let json: Value = serde_json::from_slice(&applied.stdout).unwrap();
    assert_eq!(json["conflicts"][0]["path"], "later.txt", "{json}");
    assert_eq!(
        std::fs::read_to_string(ws.join("edit.txt")).unwrap(),
        "one\nTWO\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("new.txt")).unwrap(),
        "new\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("later.txt")).unwrap(),
        "someone else's\n"
    );
}

#[test]
fn a_run_without_kept_changes_is_refused_with_what_to_do() {
    let sessions = tempfile::tempdir().unwrap();
    for command in ["diff", "apply"] {
        let out = kept(command, "0badc0de", sessions.path(), &[]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no kept changes of run 0badc0de"), "{err}");
    }
    let out = kept("apply", "../etc", sessions.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}
