//! Whose view a layered run works on: three parallel subagents writing
//! the same file each see their own write (and the first to complete
//! lands it; the others' are conflicts), and a nested subagent works on
//! its parent's merged view, its changes becoming the parent's.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::cow::{paths, result_of, spawn_json_run};
use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::*;

/// The python_execute outputs of the session file `file`, in order.
fn tool_outputs(file: &str) -> Vec<String> {
    check_session_file(Path::new(file))
        .into_iter()
        .filter(|l| l["type"] == "tool_result")
        .map(|l| l["output"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn three_parallel_subagents_writing_one_file_each_see_their_own() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let ws = workspace.path();
    std::fs::write(ws.join("shared.txt"), "before\n").unwrap();
    let write = "import secrets\nt = secrets.token_hex(8)\nopen('shared.txt', 'w').write(t)\n\
                 open('token.txt', 'w').write(t)\nprint('wrote', t)";
    let read = "print('read', open('shared.txt').read(), 'mine', open('token.txt').read())";
    let mut replies = Vec::new();
    for (n, code) in [write, read].into_iter().enumerate() {
        for _ in 0..3 {
            replies.push(tool_call_turn(
                &format!("call_{n}"),
                "python_execute",
                &json!({"code": code}),
            ));
        }
    }
    for _ in 0..3 {
        replies.push(text_turn("done"));
    }
    let model = ScriptedModel::start_held(replies);
    let child = model
        .run_command(ws, sessions.path())
        .args(["--parallel", "--task", "a", "--task", "b", "--task", "c"])
        .args(["--tools", "python_execute", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Each phase: all three have asked before any is answered, so every
    // read comes after every write.
    for phase in 1..=3 {
        assert!(model.wait_for_requests(3 * phase, Duration::from_secs(60)));
        for _ in 0..3 {
            model.release();
        }
    }
    let out = child.wait_with_output().unwrap();
    let result = result_of(&out);
    let results = result["details"]["results"].as_array().unwrap();
    assert_eq!(results.len(), 3, "{result}");
    let mut applied_by = Vec::new();
    for single in results {
        let outputs = tool_outputs(single["sessionFile"].as_str().unwrap());
        let read = outputs.iter().find(|o| o.contains("read ")).unwrap();
        let words: Vec<&str> = read.split_whitespace().collect();
        let at = words.iter().position(|w| *w == "read").unwrap();
        assert_eq!(
            words[at + 1],
            words[at + 3],
            "its own write, not another's: {read}"
        );
        let changes = &single["changes"];
        if paths(&changes["applied"]).contains(&"shared.txt".to_owned()) {
            applied_by.push(words[at + 1].to_owned());
        } else {
            assert_eq!(
                paths(&changes["conflicts"]),
                ["shared.txt", "token.txt"],
                "{changes}"
            );
        }
    }
    assert_eq!(applied_by.len(), 1, "{result}");
    assert_eq!(
        std::fs::read_to_string(ws.join("shared.txt")).unwrap(),
        applied_by[0]
    );
    assert_nothing_runs_in(ws);
}

#[test]
fn a_nested_subagent_works_on_its_parents_view_and_its_changes_become_the_parents() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let ws = workspace.path();
    let python =
        |id: &str, code: &str| tool_call_turn(id, "python_execute", &json!({"code": code}));
    let model = ScriptedModel::start(vec![
        python("p1", "open('parent.txt', 'w').write('from parent')"),
        tool_call_turn(
            "p2",
            "subagent",
            &json!({"agent": "general", "task": "Add a file.", "maxTurns": 3}),
        ),
        python(
            "c1",
            "print('saw', open('parent.txt').read()); open('child.txt', 'w').write('from child')",
        ),
        text_turn("child done"),
        python("p3", "print('parent saw', open('child.txt').read())"),
        text_turn("done"),
    ]);
    let out = model
        .run_command(ws, sessions.path())
        .args(["--task", "Delegate.", "--max-depth", "2"])
        .args(["--tools", "python_execute,subagent", "--json"])
        .output()
        .unwrap();
    let result = result_of(&out);
    assert!(result["details"]["error"].is_null(), "{result}");
    let outputs = tool_outputs(
        result["details"]["results"][0]["sessionFile"]
            .as_str()
            .unwrap(),
    );
    assert!(
        outputs.iter().any(|o| o.contains("parent saw from child")),
        "{outputs:#?}"
    );
    // The grandchild read the parent's write, which was in no file yet.
    let requests = model.requests();
    let child_tool = requests[3]["messages"].to_string();
    assert!(child_tool.contains("saw from parent"), "{child_tool}");
    assert_eq!(
        std::fs::read_to_string(ws.join("parent.txt")).unwrap(),
        "from parent"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("child.txt")).unwrap(),
        "from child"
    );
    assert_nothing_runs_in(ws);
}

#[test]
fn the_file_tools_read_the_runs_own_writes_through_its_view() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let ws = workspace.path();
    std::fs::write(ws.join("notes.txt"), "old\n").unwrap();
    let model = ScriptedModel::start_held(vec![
        tool_call_turn(
            "w",
            "python_execute",
            &json!({"code": "open('notes.txt', 'w').write('written by the run\\n')"}),
        ),
        tool_call_turn("r", "bash_read", &json!({"path": "notes.txt"})),
        text_turn("done"),
    ]);
    let child = spawn_json_run(
        &model,
        ws,
        sessions.path(),
        "Write, then read.",
        "python_execute,bash_read",
    );
    model.release();
    model.release();
    // Before the end: bash_read saw the run's write, the workspace did not.
    assert!(model.wait_for_requests(3, Duration::from_secs(60)));
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "old\n"
    );
    let read = model.requests()[2]["messages"].to_string();
    assert!(read.contains("written by the run"), "{read}");
    model.release();
    let out = child.wait_with_output().unwrap();
    let result = result_of(&out);
    assert!(result["details"]["error"].is_null(), "{result}");
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "written by the run\n"
    );
    assert_nothing_runs_in(ws);
}

#[test]
fn batch_tasks_apply_by_their_own_lines_and_their_results_lines_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(
        dir.path().join("tasks.jsonl"),
        "{\"id\": \"t1\", \"task\": \"one\"}\n{\"id\": \"t2\", \"task\": \"two\", \"apply\": \"never\"}\n",
    )
    .unwrap();
    let python =
        |id: &str, code: &str| tool_call_turn(id, "python_execute", &json!({"code": code}));
    let model = ScriptedModel::start(vec![
        python("a", "open('one.txt', 'w').write('1')"),
        text_turn("done"),
        python("b", "open('two.txt', 'w').write('2')"),
        text_turn("done"),
    ]);
    let out = super::resume_batch::scripted_batch(dir.path(), &model)
        .args(["-j", "1", "--tools", "python_execute"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = std::fs::read_to_string(dir.path().join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |id: &str| lines.iter().find(|l| l["id"] == id).unwrap()["changes"].clone();
    assert_eq!(paths(&of("t1")["applied"]), ["one.txt"], "{lines:?}");
    assert!(of("t2")["layer"].is_string(), "{lines:?}");
    assert_eq!(std::fs::read_to_string(ws.join("one.txt")).unwrap(), "1");
    assert!(!ws.join("two.txt").exists());
    assert_nothing_runs_in(&ws);
}
