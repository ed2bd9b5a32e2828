//! `subagent batch` re-runs after a SIGKILL mid-task: the task that was
//! in flight continues from its session file's last complete turn (no
//! finished turn asked again, nothing finished run twice, every id once),
//! and `--restart-interrupted` runs it from zero; a re-run of a shard
//! with a recorded failure exits 1 even when it runs nothing.

use std::path::Path;
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::resume_cmd::messages;
use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::wait_until;
use super::support::*;

/// `subagent batch` of `dir`'s tasks.jsonl against the scripted `model`
/// (provider openai-chat, model `scripted`), results in `dir`'s
/// results.jsonl, sessions in `dir`/sessions, workspace `dir`/ws; callers
/// add the tools and the rest.
pub(super) fn scripted_batch(dir: &Path, model: &ScriptedModel) -> Command {
    let mut c = Command::new(binary("subagent"));
    c.arg("batch")
        .arg(dir.join("tasks.jsonl"))
        .arg("--results")
        .arg(dir.join("results.jsonl"))
        .arg("--sessions-dir")
        .arg(dir.join("sessions"))
        .arg("--workspace")
        .arg(dir.join("ws"))
        .args(["--provider", "openai-chat", "--model", "scripted"])
        .args(["--base-url", &model.base_url()])
        .env_remove("SUBAGENT_WORKER")
        .stdin(Stdio::null());
    c
}

/// [`scripted_batch`] one task at a time, with file and python tools.
fn batch(dir: &Path, model: &ScriptedModel, extra: &[&str]) -> Command {
    let mut c = scripted_batch(dir, model);
    c.args([
        "-j",
        "1",
        "--tools",
        "bash_find,python_execute",
        "--timeout",
        "120",
        // The tool tells the test it runs by a file in the workspace,
        // which a copy-on-write layer would keep from it until the end.
        "--isolation",
        "none",
    ])
    .args(extra);
    c
}

/// The task a request belongs to: its first user message.
fn task_of(request: &Value) -> String {
    messages(request)
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_batch_killed_mid_task_continues_that_task_from_its_last_turn_on_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let ws = dir.join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(
        dir.join("tasks.jsonl"),
        [
            r#"{"id":"a","task":"task a"}"#,
            r#"{"id":"b","task":"task b"}"#,
            r#"{"id":"c","task":"task c"}"#,
        ]
        .join("\n")
            + "\n",
    )
    .unwrap();
    let once = "open('ran.txt', 'a').write('once\\n')\n";
    let hang = "import pathlib, time\npathlib.Path('started').write_text('1')\ntime.sleep(120)\n";
    let first_model = ScriptedModel::start(vec![
        tool_call_turn("a1", "bash_find", &json!({"pattern": "*"})),
        tool_call_turn("a2", "bash_find", &json!({"pattern": "*.txt"})),
        text_turn("a done"),
        tool_call_turn("b1", "python_execute", &json!({"code": once})),
        tool_call_turn("b2", "python_execute", &json!({"code": hang})),
        text_turn("never reached"),
    ]);
    let mut first = batch(dir, &first_model, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("task b's second tool call to run", || {
        ws.join("started").exists()
    });
    // SAFETY: kill sends a signal to the child we started.
    unsafe { libc::kill(first.id() as libc::pid_t, libc::SIGKILL) };
    first.wait().unwrap();
    wait_until("the killed batch's processes to go", || {
        processes_in(&ws).is_empty()
    });
    std::fs::remove_file(ws.join("started")).unwrap();

    let model = ScriptedModel::start(vec![text_turn("b done"), text_turn("c done")]);
    let out = batch(dir, &model, &[]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("task `b`: continues from turn 2"),
        "{stderr}"
    );
    assert_nothing_runs_in(&ws);

    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let results: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = results.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a", "b", "c"], "every id exactly once");
    assert_eq!(results[1]["output"], "b done");
    assert_eq!(results[1]["continuedFrom"], 2);
    assert_eq!(results[2]["continuedFrom"], Value::Null);

    // Model requests per task on the re-run: none for the finished a, one
    // for b (no finished turn asked again), one for c.
    let sent = model.requests();
    let per_task: Vec<String> = sent.iter().map(task_of).collect();
    assert_eq!(per_task, ["task b", "task c"]);
    let before = messages(&first_model.requests()[4]);
    let now = messages(&sent[0]);
    assert_eq!(now.len(), before.len() + 2, "{now:#?}");
    assert_eq!(now[..before.len()], before[..]);
    assert_eq!(now[before.len() + 1]["tool_call_id"], "b2");
    assert_eq!(
        std::fs::read_to_string(ws.join("ran.txt")).unwrap(),
        "once\n"
    );
    assert!(
        !ws.join("started").exists(),
        "the cut call was not run again"
    );
}

#[test]
fn a_batch_rerun_with_restart_interrupted_runs_the_task_from_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let ws = dir.join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(
        dir.join("tasks.jsonl"),
        "{\"id\":\"b\",\"task\":\"task b\"}\n",
    )
    .unwrap();
    let hang = "import pathlib, time\npathlib.Path('started').write_text('1')\ntime.sleep(120)\n";
    let first_model = ScriptedModel::start(vec![tool_call_turn(
        "b1",
        "python_execute",
        &json!({"code": hang}),
    )]);
    let mut first = batch(dir, &first_model, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the tool call to run", || ws.join("started").exists());
    // SAFETY: kill sends a signal to the child we started.
    unsafe { libc::kill(first.id() as libc::pid_t, libc::SIGKILL) };
    first.wait().unwrap();
    wait_until("the killed batch's processes to go", || {
        processes_in(&ws).is_empty()
    });

    let model = ScriptedModel::start(vec![text_turn("from zero")]);
    let out = batch(dir, &model, &["--restart-interrupted"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent = model.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        messages(&sent[0])
            .iter()
            .filter(|m| m["role"] != "system")
            .collect::<Vec<_>>(),
        [&json!({"role": "user", "content": "task b"})]
    );
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    assert!(!text.contains("continuedFrom"), "{text}");
    assert_nothing_runs_in(&ws);
}

/// A re-run of a shard whose tasks are all recorded, one failed, runs
/// nothing and still exits 1: a Kubernetes retry of a failed shard must
/// not turn it green (docs/scale-out.md).
#[test]
fn a_rerun_with_every_task_recorded_and_one_failed_still_exits_1() {
    use super::batch_cmd::{BatchDir, assert_workers_gone, ok_task, stderr};
    let dir = BatchDir::new();
    dir.write_tasks(&[
        ok_task("a"),
        r#"{"id":"bad","task":"fixture:fail"}"#.to_owned(),
    ]);
    let first = dir.batch("results.jsonl", &[]).output().unwrap();
    assert_eq!(first.status.code(), Some(1), "{}", stderr(&first));
    assert_eq!(dir.results("results.jsonl").len(), 2);
    let sessions = dir.session_files().len();

    let again = dir.batch("results.jsonl", &[]).output().unwrap();
    let err = stderr(&again);
    assert!(err.contains("2 already in results, 0 to run"), "{err}");
    assert_eq!(again.status.code(), Some(1), "a recorded failure: {err}");
    assert_eq!(dir.results("results.jsonl").len(), 2, "nothing ran again");
    assert_eq!(dir.session_files().len(), sessions);
    assert_workers_gone(&dir);
}
