//! What the host keeps inside a workspace stays out of a tool's reach,
//! through the real CLI: a sessions dir (`--sessions-dir ./s`) and a
//! results file (`batch --results results.jsonl`) the operator put in the
//! workspace are read-only to `python_execute`, and so are `.git`,
//! `.subagent` and `.claude`, also when they did not exist (a tool cannot
//! create them); and the host's device nodes keep their mode and times
//! (the tool is host uid 0 when the supervisor is root).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use super::python_call::{python_call, python_tries};
use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::*;

#[test]
fn a_sessions_dir_in_the_workspace_and_the_absent_config_entries_stay_out_of_reach() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let code = python_tries(&[
        ("forge", "open('s/forged.jsonl', 'w').write('{}')"),
        (
            "append",
            "open(glob.glob('s/**/*.jsonl', recursive=True)[0], 'a').write('{\"type\":\"forged\"}\\n')",
        ),
        ("move_sessions", "os.rename('s', 'gone')"),
        ("mkdir_git", "os.mkdir('.git')"),
        ("link_git", "os.symlink('.gitdata/.git', '.git')"),
        ("mkdir_subagent", "os.makedirs('.subagent/agents')"),
        ("write_claude", "os.makedirs('.claude/agents')"),
        ("elsewhere", "open('notes.txt', 'w').write('kept')"),
    ]);
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_attack", "python_execute", &json!({ "code": code })),
        text_turn("done"),
    ]);
    let out = model
        .run_command(Path::new("."), Path::new("./s"))
        .current_dir(&ws)
        .args(["--tools", "python_execute", "--task", "Try it.", "--json"])
        .args(["--timeout", "60"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Relative, as `--sessions-dir ./s` is: from the workspace.
    let lines = check_session_file(&ws.join(session_file_of(&result)));
    let output = tool_output(&lines);
    for name in [
        "forge",
        "append",
        "move_sessions",
        "mkdir_git",
        "link_git",
        "mkdir_subagent",
        "write_claude",
    ] {
        assert!(
            output.contains(&format!("{name} OSError"))
                || output.contains(&format!("{name} PermissionError"))
                || output.contains(&format!("{name} FileExistsError")),
            "{name} got through: {output}"
        );
    }
    assert!(output.contains("elsewhere ok"), "{output}");
    assert!(!lines.iter().any(|l| l["type"] == "forged"), "{lines:#?}");
    assert!(!ws.join("s/forged.jsonl").exists());
    assert!(ws.join("s").is_dir());
    // The placeholders that kept the names are gone with the call.
    for name in [".git", ".subagent", ".claude", ".gitdata"] {
        assert!(
            std::fs::symlink_metadata(ws.join(name)).is_err(),
            "{name} is left in the workspace"
        );
    }
    assert_nothing_runs_in(&ws);
}

#[test]
fn a_batch_results_file_in_the_workspace_is_read_only_to_its_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        dir.path().join("tasks.jsonl"),
        "{\"id\":\"t1\",\"task\":\"Try it.\"}\n",
    )
    .unwrap();
    let code = python_tries(&[
        (
            "truncate",
            "open('results.jsonl', 'w').write('{\"id\":\"t1\"}\\n')",
        ),
        (
            "replace",
            "open('forged', 'w').write('x'); os.rename('forged', 'results.jsonl')",
        ),
        ("remove", "os.remove('results.jsonl')"),
    ]);
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_attack", "python_execute", &json!({ "code": code })),
        text_turn("done"),
    ]);
    let _ = binary("subagent-worker");
    let out = Command::new(binary("subagent"))
        .arg("batch")
        .arg(dir.path().join("tasks.jsonl"))
        .args(["--results", "results.jsonl", "--workspace", "."])
        .args(["--provider", "openai-chat", "--model", "scripted"])
        .arg("--base-url")
        .arg(model.base_url())
        .args(["--tools", "python_execute", "--timeout", "60"])
        .arg("--sessions-dir")
        .arg(dir.path().join("sessions"))
        .env_remove("SUBAGENT_WORKER")
        .current_dir(&ws)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let results = std::fs::read_to_string(ws.join("results.jsonl")).unwrap();
    let lines: Vec<Value> = results
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{results}");
    assert_eq!(lines[0]["status"], "ok", "{results}");
    let session = check_session_file(Path::new(lines[0]["sessionFile"].as_str().unwrap()));
    let output = tool_output(&session);
    for name in ["truncate", "replace", "remove"] {
        assert!(!output.contains(&format!("{name} ok")), "{output}");
    }
    assert_nothing_runs_in(&ws);
}

/// Puts a device node's mode and times back when dropped, so a failing
/// run of this test does not leave the host's node changed.
struct Restore {
    path: &'static str,
    mode: u32,
    atime: i64,
    mtime: i64,
}

impl Restore {
    fn of(path: &'static str) -> Self {
        let meta = std::fs::metadata(path).unwrap();
        Self {
            path,
            mode: meta.mode(),
            atime: meta.atime(),
            mtime: meta.mtime(),
        }
    }

    fn changed(&self) -> bool {
        let meta = std::fs::metadata(self.path).unwrap();
        meta.mode() != self.mode || meta.mtime() != self.mtime
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::set_permissions(self.path, std::fs::Permissions::from_mode(self.mode));
        let times = std::fs::FileTimes::new()
            .set_accessed(std::time::UNIX_EPOCH + std::time::Duration::from_secs(self.atime as u64))
            .set_modified(
                std::time::UNIX_EPOCH + std::time::Duration::from_secs(self.mtime as u64),
            );
        if let Ok(file) = std::fs::File::open(self.path) {
            let _ = file.set_times(times);
        }
    }
}

#[test]
fn the_hosts_device_nodes_keep_their_mode_and_times() {
    let full = Restore::of("/dev/full");
    let urandom = Restore::of("/dev/urandom");
    let null = Restore::of("/dev/null");
    let dir = tempfile::tempdir().unwrap();
    let code = python_tries(&[
        ("chmod_full", "os.chmod('/dev/full', 0o600)"),
        ("utime_urandom", "os.utime('/dev/urandom', (0, 0))"),
        ("chmod_null", "os.chmod('/dev/null', 0o600)"),
        ("write_null", "open('/dev/null', 'w').write('x' * 100)"),
        (
            "read_urandom",
            "assert len(open('/dev/urandom', 'rb').read(16)) == 16",
        ),
    ]);
    let (output, _) = python_call(dir.path(), &code);
    for node in [&full, &urandom, &null] {
        assert!(
            !node.changed(),
            "{} changed on the host: {output}",
            node.path
        );
    }
    for name in ["chmod_full", "utime_urandom", "chmod_null"] {
        assert!(output.contains(&format!("{name} OSError")), "{output}");
        assert!(output.contains("Read-only file system"), "{output}");
    }
    // Using the devices still works.
    assert!(output.contains("write_null ok"), "{output}");
    assert!(output.contains("read_urandom ok"), "{output}");
}
