//! Copy-on-write workspaces (`--isolation overlay`, the default for a run
//! whose tools can write) through the real CLI, the scripted model and
//! real python3: a completed run's writes land file by file, a run that
//! does not complete leaves the workspace byte for byte, a file changed
//! in the workspace meanwhile is a conflict and keeps its newer content,
//! and what the host trusts (`.git`, setuid files, symlinks out) is
//! refused.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::*;

/// Every file under `dir` with its bytes and mode (a snapshot to compare).
pub(super) fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, u32)> {
    use std::os::unix::fs::MetadataExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap().flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(dir).unwrap().to_owned();
            if meta.is_dir() {
                stack.push(path);
                out.insert(rel, (Vec::new(), meta.mode()));
            } else if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(
                    rel,
                    (target.into_os_string().into_encoded_bytes(), meta.mode()),
                );
            } else {
                out.insert(rel, (std::fs::read(&path).unwrap(), meta.mode()));
            }
        }
    }
    out
}

/// Runs `code` in python_execute, then the model says "done"; `flags` are
/// added to the run.
pub(super) fn run_code(workspace: &Path, sessions: &Path, code: &str, flags: &[&str]) -> Output {
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_1", "python_execute", &json!({"code": code})),
        text_turn("done"),
    ]);
    model
        .run_command(workspace, sessions)
        .args([
            "--task",
            "Change the files.",
            "--tools",
            "python_execute",
            "--json",
        ])
        .args(flags)
        .output()
        .unwrap()
}

/// The result object of `out`, checked against the schema, its children
/// reaped.
pub(super) fn result_of(out: &Output) -> Value {
    let result: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}; stderr:\n{}", String::from_utf8_lossy(&out.stderr)));
    assert_valid_result(&result);
    assert_children_reaped(&result);
    result
}

/// `subagent run --json` of `task` with `tools`, its output piped: for
/// tests that act on the workspace while the run is held mid-way.
pub(super) fn spawn_json_run(
    model: &ScriptedModel,
    ws: &Path,
    sessions: &Path,
    task: &str,
    tools: &str,
) -> std::process::Child {
    model
        .run_command(ws, sessions)
        .args(["--task", task, "--tools", tools, "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// The `changes` line of the run's session file.
pub(super) fn changes_line(result: &Value) -> Value {
    let file = result["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap()
        .to_owned();
    check_session_file(Path::new(&file))
        .into_iter()
        .find(|l| l["type"] == "changes")
        .expect("a changes line")
}

/// The paths of a `changes` list (plain strings or objects with `path`).
pub(super) fn paths(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| {
            v.as_str()
                .map_or_else(|| v["path"].as_str().unwrap().to_owned(), str::to_owned)
        })
        .collect()
}

#[test]
fn a_completed_runs_writes_edits_and_deletions_land() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let ws = workspace.path();
    std::fs::write(ws.join("edit.txt"), "old\n").unwrap();
    std::fs::write(ws.join("gone.txt"), "bye\n").unwrap();
    std::fs::create_dir(ws.join("src")).unwrap();
    let code = r#"
import os
with open("edit.txt", "a") as f: f.write("new\n")
os.makedirs("src/deep", exist_ok=True)
open("src/deep/made.txt", "w").write("made\n")
os.remove("gone.txt")
print(open("edit.txt").read())
"#;
    let out = run_code(ws, sessions.path(), code, &[]);
    let result = result_of(&out);
    assert!(result["details"]["error"].is_null(), "{result}");
    let changes = &result["details"]["results"][0]["changes"];
    assert_eq!(
        paths(&changes["applied"]),
        ["edit.txt", "gone.txt", "src/deep", "src/deep/made.txt"],
        "{changes}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("edit.txt")).unwrap(),
        "old\nnew\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("src/deep/made.txt")).unwrap(),
        "made\n"
    );
    assert!(!ws.join("gone.txt").exists());
    // The tool saw its own write (the merged view).
    let line = changes_line(&result);
    assert_eq!(line["applied"], changes["applied"], "{line}");
    // `sessions show` lists them.
    let run = result["details"]["runId"].as_str().unwrap();
    let show = std::process::Command::new(binary("subagent"))
        .args(["sessions", "show", run, "--sessions-dir"])
        .arg(sessions.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(text.contains("changes: 4 path(s), 4 applied"), "{text}");
    assert!(
        text.contains("modified edit.txt, 8 bytes: applied"),
        "{text}"
    );
    assert!(
        text.contains("deleted gone.txt, 0 bytes: applied"),
        "{text}"
    );
    assert_nothing_runs_in(ws);
}

#[test]
fn a_run_that_times_out_after_writing_leaves_the_workspace_byte_for_byte() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let ws = workspace.path();
    std::fs::write(ws.join("edit.txt"), "old\n").unwrap();
    std::fs::write(ws.join("gone.txt"), "bye\n").unwrap();
    let before = snapshot(ws);
    let code = r#"
import os, time
open("edit.txt", "w").write("half\n")
open("new.txt", "w").write("new\n")
os.remove("gone.txt")
time.sleep(60)
"#;
    let out = run_code(ws, sessions.path(), code, &["--timeout", "3s"]);
    let result = result_of(&out);
    assert!(result["details"]["error"].is_object(), "{result}");
    assert_eq!(snapshot(ws), before);
    let changes = &result["details"]["results"][0]["changes"];
    assert!(paths(&changes["applied"]).is_empty(), "{changes}");
    assert!(
        changes["notApplied"]
            .as_str()
            .unwrap()
            .contains("did not complete"),
        "{changes}"
    );
    assert_nothing_runs_in(ws);
}

#[test]
fn a_file_changed_in_the_workspace_meanwhile_is_a_conflict_and_keeps_its_newer_content() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let ws = workspace.path();
    std::fs::write(ws.join("shared.txt"), "v1\n").unwrap();
    let code = r#"
open("shared.txt", "w").write("the run's\n")
open("mine.txt", "w").write("mine\n")
"#;
    let model = ScriptedModel::start_held(vec![
        tool_call_turn("call_1", "python_execute", &json!({"code": code})),
        text_turn("done"),
    ]);
    let child = spawn_json_run(
        &model,
        ws,
        sessions.path(),
        "Change the files.",
        "python_execute",
    );
    model.release();
    // The second request comes once the tool call has run: the run's
    // write is in its layer, and the workspace's file changes now.
    assert!(model.wait_for_requests(2, std::time::Duration::from_secs(60)));
    std::fs::write(ws.join("shared.txt"), "someone else's\n").unwrap();
    model.release();
    let out = child.wait_with_output().unwrap();
    let result = result_of(&out);
    let changes = &result["details"]["results"][0]["changes"];
    assert_eq!(paths(&changes["conflicts"]), ["shared.txt"], "{changes}");
    assert_eq!(paths(&changes["applied"]), ["mine.txt"], "{changes}");
    assert_eq!(
        std::fs::read_to_string(ws.join("shared.txt")).unwrap(),
        "someone else's\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("mine.txt")).unwrap(),
        "mine\n"
    );
    assert_nothing_runs_in(ws);
}

#[test]
fn git_hooks_setuid_files_and_symlinks_out_are_refused() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let ws = workspace.path();
    let code = r##"
import os
for path, make in [
    (".git/hooks/x", lambda: (os.makedirs(".git/hooks", exist_ok=True), open(".git/hooks/x", "w").write("#!/bin/sh\necho owned\n"), os.chmod(".git/hooks/x", 0o755))),
    ("suid", lambda: (open("suid", "w").write("#!/bin/sh\n"), os.chmod("suid", 0o4755))),
    ("out", lambda: os.symlink("/etc/passwd", "out")),
    ("up", lambda: os.symlink("../x", "up")),
    ("fine.txt", lambda: open("fine.txt", "w").write("fine\n")),
]:
    try:
        make()
        print(f"{path}: made")
    except OSError as e:
        print(f"{path}: {e}")
"##;
    let out = run_code(ws, sessions.path(), code, &[]);
    let result = result_of(&out);
    let changes = &result["details"]["results"][0]["changes"];
    let made = tool_output(&result);
    let refused = paths(&changes["refused"]);
    // The tool sandbox keeps `.git` read-only and strips setuid chmods
    // already; what got through to the layer must be refused there.
    for path in [".git/hooks/x", "suid", "out", "up"] {
        if made.contains(&format!("{path}: made")) {
            assert!(
                refused.contains(&path.to_owned()),
                "{path} not refused: {changes}"
            );
        }
    }
    assert!(
        made.contains("out: made") && made.contains("up: made"),
        "{made}"
    );
    assert!(
        paths(&changes["applied"]).contains(&"fine.txt".to_owned()),
        "{changes}"
    );
    assert!(!ws.join(".git").exists());
    if let Ok(meta) = std::fs::metadata(ws.join("suid")) {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(meta.permissions().mode() & 0o6000, 0, "{made}");
    }
    assert!(std::fs::symlink_metadata(ws.join("out")).is_err());
    assert!(std::fs::symlink_metadata(ws.join("up")).is_err());
    assert_nothing_runs_in(ws);
}

/// The python_execute output of the run's session file.
fn tool_output(result: &Value) -> String {
    let file = result["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap()
        .to_owned();
    check_session_file(Path::new(&file))
        .into_iter()
        .find(|l| l["type"] == "tool_result")
        .expect("a tool result line")["output"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Starts a run whose tool call writes in the workspace and whose next
/// model reply is held; returns once the tool call has run (the model was
/// asked again), with the run still going.
fn started_after_writing(model: &ScriptedModel, ws: &Path, sessions: &Path) -> std::process::Child {
    let child = model
        .run_command(ws, sessions)
        .args([
            "--task",
            "Change the files.",
            "--tools",
            "python_execute",
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    model.release();
    assert!(model.wait_for_requests(2, std::time::Duration::from_secs(60)));
    child
}

fn writing_model() -> ScriptedModel {
    let code = r#"
import os
open("edit.txt", "w").write("half\n")
open("new.txt", "w").write("new\n")
os.remove("gone.txt")
"#;
    ScriptedModel::start_held(vec![
        tool_call_turn("call_1", "python_execute", &json!({"code": code})),
        text_turn("done"),
    ])
}

fn workspace_with_files() -> tempfile::TempDir {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("edit.txt"), "old\n").unwrap();
    std::fs::write(workspace.path().join("gone.txt"), "bye\n").unwrap();
    workspace
}

#[test]
fn a_run_cancelled_after_writing_leaves_the_workspace_byte_for_byte() {
    let workspace = workspace_with_files();
    let sessions = tempfile::tempdir().unwrap();
    let ws = workspace.path();
    let before = snapshot(ws);
    let model = writing_model();
    let child = started_after_writing(&model, ws, sessions.path());
    // SAFETY: a plain kill(2) of a process this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let result = result_of(&out);
    assert_eq!(
        result["details"]["error"]["code"], "SUBAGENT_CANCELLED",
        "{result}"
    );
    assert_eq!(snapshot(ws), before);
    let changes = &result["details"]["results"][0]["changes"];
    assert!(paths(&changes["applied"]).is_empty(), "{changes}");
    assert_nothing_runs_in(ws);
}

#[test]
fn a_run_whose_supervisor_is_killed_after_writing_leaves_the_workspace_byte_for_byte() {
    let workspace = workspace_with_files();
    let sessions = tempfile::tempdir().unwrap();
    let ws = workspace.path();
    let before = snapshot(ws);
    let model = writing_model();
    let mut child = started_after_writing(&model, ws, sessions.path());
    child.kill().unwrap(); // SIGKILL: no code of the supervisor runs
    child.wait().unwrap();
    // The worker dies of its parent-death signal, its layer with it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !processes_in(ws).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "{:?}",
            processes_in(ws)
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(snapshot(ws), before);
}

#[test]
fn a_file_the_workspace_deleted_meanwhile_is_a_conflict_and_stays_deleted() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let ws = workspace.path();
    std::fs::write(ws.join("doomed.txt"), "v1\n").unwrap();
    let model = ScriptedModel::start_held(vec![
        tool_call_turn(
            "call_1",
            "python_execute",
            &json!({"code": "open('doomed.txt', 'a').write('the run\\'s\\n')"}),
        ),
        text_turn("done"),
    ]);
    let child = spawn_json_run(
        &model,
        ws,
        sessions.path(),
        "Change the files.",
        "python_execute",
    );
    model.release();
    assert!(model.wait_for_requests(2, std::time::Duration::from_secs(60)));
    std::fs::remove_file(ws.join("doomed.txt")).unwrap();
    model.release();
    let out = child.wait_with_output().unwrap();
    let result = result_of(&out);
    assert!(
        !ws.join("doomed.txt").exists(),
        "the run re-created a deleted file"
    );
    let changes = &result["details"]["results"][0]["changes"];
    assert_eq!(paths(&changes["conflicts"]), ["doomed.txt"], "{changes}");
    assert_nothing_runs_in(ws);
}
