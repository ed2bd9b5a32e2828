//! `subagent run --resume`, through the real CLI and worker: a follow-up
//! continues a recorded conversation (what the model is sent is checked
//! message by message, against the scripted model and the real
//! llama-server), a run whose supervisor was SIGKILLed in the middle of a
//! tool call continues at its last complete turn without running anything
//! twice, and what cannot be continued faithfully is refused before any
//! model is asked.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::fault_proxy::{Fault, FaultProxy};
use super::llama::LlamaServer;
use super::scripted_model::{ScriptedModel, offered_tools, text_turn, tool_call_turn};
use super::support::wait_until;
use super::support::*;

/// The result object of a `--json` run that exited with `code`.
fn result_of(out: &Output, code: i32) -> Value {
    assert_eq!(
        out.status.code(),
        Some(code),
        "stderr: {}\nstdout: {}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_valid_result(&result);
    result
}

pub(super) fn messages(request: &Value) -> Vec<Value> {
    request["messages"].as_array().unwrap().clone()
}

fn session_file(result: &Value) -> PathBuf {
    PathBuf::from(
        result["details"]["results"][0]["sessionFile"]
            .as_str()
            .unwrap(),
    )
}

fn run_id_of(file: &Path) -> String {
    let lines = check_session_file(file);
    lines[0]["runId"].as_str().unwrap().to_owned()
}

/// `subagent` with session files under `sessions` and the real worker.
fn subagent(sessions: &Path) -> Command {
    let mut c = Command::new(binary("subagent"));
    c.arg("run")
        .arg("--sessions-dir")
        .arg(sessions)
        .env_remove("SUBAGENT_WORKER")
        .stdin(Stdio::null());
    c
}

#[test]
fn a_follow_up_is_sent_after_the_recorded_conversation_with_its_tools() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("a.txt"), "hello\n").unwrap();
    let first_model = ScriptedModel::start(vec![
        tool_call_turn("call_1", "bash_find", &json!({"pattern": "*.txt"})),
        text_turn("One file: a.txt"),
    ]);
    let first = result_of(
        &first_model
            .run_command(workspace.path(), sessions.path())
            .args(["--tools", "bash_find", "--json"])
            .args(["--task", "List the text files."])
            .output()
            .unwrap(),
        0,
    );
    let first_file = session_file(&first);
    let first_id = run_id_of(&first_file);

    let model = ScriptedModel::start(vec![text_turn("No tests.")]);
    let out = model
        .run_command(workspace.path(), sessions.path())
        .args(["--resume", &first_id, "--task", "And the tests?", "--json"])
        .output()
        .unwrap();
    assert_nothing_runs_in(workspace.path());
    let second = result_of(&out, 0);
    let single = &second["details"]["results"][0];
    assert_eq!(single["output"], "No tests.");
    assert_eq!(single["continuedFrom"], 2);
    assert_eq!(single["usage"]["turns"], 1, "the budget counts the new run");

    // What the model was sent: the first run's last request, its answer,
    // then the follow-up; the same tools offered.
    let before = messages(&first_model.requests()[1]);
    let sent = model.requests();
    assert_eq!(sent.len(), 1);
    let now = messages(&sent[0]);
    assert_eq!(now.len(), before.len() + 2, "{now:#?}");
    assert_eq!(now[..before.len()], before[..]);
    assert_eq!(now[before.len()]["role"], "assistant");
    assert_eq!(now[before.len()]["content"], "One file: a.txt");
    assert_eq!(
        now[before.len() + 1],
        json!({"role": "user", "content": "And the tests?"})
    );
    assert_eq!(offered_tools(&sent[0]), vec!["bash_find"]);

    // The new file names the one it continues; `sessions show` links both ways.
    let second_file = session_file(&second);
    let lines = check_session_file(&second_file);
    assert_eq!(lines[0]["task"], "And the tests?");
    assert_eq!(
        lines[0]["resumedFrom"],
        json!({"runId": first_id, "file": first_file.display().to_string(), "turns": 2})
    );
    let second_id = run_id_of(&second_file);
    let show = |id: &str| {
        let out = Command::new(binary("subagent"))
            .args(["sessions", "show", id, "--sessions-dir"])
            .arg(sessions.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = show(&second_id);
    assert!(
        shown.contains(&format!("resumedFrom  {first_id} after 2 turns")),
        "{shown}"
    );
    let shown = show(&first_id);
    assert!(
        shown.contains(&format!(
            "continued by {second_id} ({})",
            second_file.display()
        )),
        "{shown}"
    );
}

#[test]
fn a_run_killed_mid_tool_call_continues_at_its_last_complete_turn() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let once = "open('ran.txt', 'a').write('once\\n')\nprint('wrote')\n";
    let hang = "import pathlib, time\npathlib.Path('started').write_text('1')\ntime.sleep(120)\n";
    let first_model = ScriptedModel::start(vec![
        tool_call_turn("call_1", "python_execute", &json!({"code": once})),
        tool_call_turn("call_2", "python_execute", &json!({"code": hang})),
        text_turn("never reached"),
    ]);
    let mut first = first_model
        .run_command(workspace.path(), sessions.path())
        .args(["--task", "write, then wait", "--tools", "python_execute"])
        // The tool's file tells the test it runs: in place, not in a layer.
        .args(["--timeout", "120", "--isolation", "none"])
        .arg("--json")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = workspace.path().join("started");
    while !started.exists() {
        // A run that ended instead says why on stdout.
        if first.try_wait().unwrap().is_some() {
            let out = first.wait_with_output().unwrap();
            panic!(
                "the run ended before its second tool call: {}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: kill sends a signal to the child we started.
    unsafe { libc::kill(first.id() as libc::pid_t, libc::SIGKILL) };
    first.wait().unwrap();
    wait_until("the killed run's processes to go", || {
        processes_in(workspace.path()).is_empty()
    });
    let files = jsonl_files(sessions.path());
    assert_eq!(files.len(), 1);
    // No ending line to check for: read it line by line.
    let killed: Vec<Value> = std::fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(killed[0]["type"], "session");
    assert!(
        !killed.iter().any(|l| l["status"].is_string()),
        "a killed supervisor writes no ending line"
    );
    std::fs::remove_file(workspace.path().join("started")).unwrap();

    // No task: an interrupted run continues as it stood.
    let model = ScriptedModel::start(vec![text_turn("Finished.")]);
    let out = model
        .run_command(workspace.path(), sessions.path())
        .arg("--resume")
        .arg(&files[0])
        .arg("--json")
        .output()
        .unwrap();
    assert_nothing_runs_in(workspace.path());
    let result = result_of(&out, 0);
    assert_eq!(result["details"]["results"][0]["continuedFrom"], 2);
    assert_eq!(result["details"]["results"][0]["output"], "Finished.");

    let sent = model.requests();
    assert_eq!(sent.len(), 1, "one new turn, nothing finished asked again");
    let before = messages(&first_model.requests()[1]);
    let now = messages(&sent[0]);
    assert_eq!(now.len(), before.len() + 2, "{now:#?}");
    assert_eq!(now[..before.len()], before[..]);
    let cut = &now[before.len()];
    assert_eq!(cut["role"], "assistant");
    assert_eq!(cut["tool_calls"][0]["id"], "call_2");
    let not_run = &now[before.len() + 1];
    assert_eq!(not_run["role"], "tool");
    assert_eq!(not_run["tool_call_id"], "call_2");
    assert!(
        not_run["content"]
            .as_str()
            .unwrap()
            .contains("was not completed: the run was interrupted"),
        "{not_run:#}"
    );
    // The first call ran once, the cut one was not run again.
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("ran.txt")).unwrap(),
        "once\n"
    );
    assert!(!workspace.path().join("started").exists());
}

/// A finished run with one `bash_find` call, for the refusals.
fn recorded_run(workspace: &Path, sessions: &Path) -> (ScriptedModel, PathBuf) {
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_1", "bash_find", &json!({"pattern": "*"})),
        text_turn("done"),
    ]);
    let result = result_of(
        &model
            .run_command(workspace, sessions)
            .args(["--tools", "bash_find", "--json", "--task", "look"])
            .output()
            .unwrap(),
        0,
    );
    (model, session_file(&result))
}

#[test]
fn what_cannot_be_continued_faithfully_is_refused_before_any_model_is_asked() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let (model, file) = recorded_run(workspace.path(), sessions.path());
    let id = run_id_of(&file);
    let torn = sessions.path().join("torn.jsonl");
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("edited by hand");
    std::fs::write(&torn, text).unwrap();
    let torn = torn.display().to_string();

    let cases: [(&[&str], &str); 5] = [
        (
            &["--resume", "deadbeef", "--task", "x"],
            "cannot resume \"deadbeef\": no session file for run",
        ),
        (
            &["--resume", &torn, "--task", "x"],
            "is not a session line; the file was damaged or edited",
        ),
        (
            &["--resume", &id, "--task", "x", "--tools", "bash_read"],
            "calls bash_find, which this run may not use",
        ),
        (
            &["--resume", &id, "--task", "x", "--provider", "anthropic"],
            "openai-chat dialect and this run would use anthropic",
        ),
        (&["--resume", &id], "ended completed: give a follow-up task"),
    ];
    let files_before = jsonl_files(sessions.path()).len();
    for (args, expected) in cases {
        // From the recorded workspace: a recording does not choose where a
        // run works (`session_evidence` has the refusal from elsewhere).
        let out = subagent(sessions.path())
            .current_dir(workspace.path())
            .args(["--model", "scripted", "--base-url", &model.base_url()])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    assert_eq!(model.requests().len(), 2, "only the recorded run asked");
    assert_eq!(jsonl_files(sessions.path()).len(), files_before);
}

#[test]
fn a_follow_up_against_the_real_model_carries_the_first_conversation_exactly() {
    let Some(server) = LlamaServer::start_or_skip("resume follow-up") else {
        return;
    };
    let proxy = FaultProxy::start(
        Some(std::net::SocketAddr::from(([127, 0, 0, 1], server.port))),
        vec![],
        Fault::Forward,
    );
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let real = |extra: &[&str]| {
        subagent(sessions.path())
            .args(["--provider", "openai-chat", "--model", "smollm2"])
            .args(["--base-url", &proxy.base_url(), "--tools", "none"])
            .args(["--temperature", "0", "--max-tokens", "32", "--json"])
            .arg("--workspace")
            .arg(workspace.path())
            .args(extra)
            .output()
            .unwrap()
    };
    let first = result_of(&real(&["--task", "Say hello."]), 0);
    let answer = first["details"]["results"][0]["output"].clone();
    let id = run_id_of(&session_file(&first));
    let second = result_of(&real(&["--resume", &id, "--task", "Now say goodbye."]), 0);
    drop(server);

    let single = &second["details"]["results"][0];
    assert_eq!(single["continuedFrom"], 1);
    assert!(
        single["usage"]["output"].as_u64().unwrap() > 0,
        "{single:#}"
    );
    let seen = proxy.requests();
    assert_eq!(seen.len(), 2, "one request per run");
    let body = |i: usize| serde_json::from_slice::<Value>(&seen[i].body).unwrap();
    let before = messages(&body(0));
    let now = messages(&body(1));
    assert_eq!(now.len(), before.len() + 2, "{now:#?}");
    assert_eq!(now[..before.len()], before[..]);
    assert_eq!(now[before.len()]["role"], "assistant");
    assert_eq!(now[before.len()]["content"], answer);
    assert_eq!(
        now[before.len() + 1],
        json!({"role": "user", "content": "Now say goodbye."})
    );
}
