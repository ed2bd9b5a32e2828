//! The model's task list (`todo_write`, issue 35) end to end: the real
//! `subagent` CLI and worker, a scripted model writing lists. The result
//! carries the last list the tool accepted (valid against the shared
//! result schema), `sessions show` prints it readably, a resume starts from
//! it and a replay matches its recording; in a real terminal (a private
//! tmux server) the status line shows it, and a hostile item in progress
//! (escape sequences, newlines, 2,000 bytes) stays short text on one line.

use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::status_line::{Tmux, check_sessions, run_args, shell_line, status_line, workspace};
use super::support::*;
use super::tools_e2e::{Workspace, run_cli};

fn list(items: &[(&str, &str, &str)]) -> Value {
    let todos: Vec<Value> = items
        .iter()
        .map(|(content, status, active)| {
            json!({"content": content, "status": status, "activeForm": active})
        })
        .collect();
    json!({ "todos": todos })
}

fn first() -> Value {
    list(&[
        ("Read the notes", "in_progress", "Reading the notes"),
        ("Write the summary", "pending", "Writing the summary"),
    ])
}

fn second() -> Value {
    list(&[
        ("Read the notes", "completed", "Reading the notes"),
        ("Write the summary", "in_progress", "Writing the summary"),
    ])
}

/// Two items in progress: the tool refuses it, so it must not show.
fn refused() -> Value {
    list(&[
        ("Refused one", "in_progress", "Refusing"),
        ("Refused two", "in_progress", "Refusing"),
    ])
}

/// `subagent sessions ARGS --sessions-dir DIR`, exit 0, its stdout.
fn sessions_ok(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new(binary("subagent"))
        .arg("sessions")
        .args(args)
        .arg("--sessions-dir")
        .arg(dir)
        .env_remove("SUBAGENT_WORKER")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_exit(&out, 0);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_result_carries_the_last_accepted_list_and_sessions_show_resume_and_replay_keep_it() {
    let workspace = Workspace::new();
    let sessions = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        tool_call_turn("t1", "todo_write", &first()),
        tool_call_turn("t2", "todo_write", &second()),
        tool_call_turn("t3", "todo_write", &refused()),
        text_turn("done"),
    ]);
    let out = run_cli(
        &model,
        &workspace,
        sessions.path(),
        // implementer: its own tools hold todo_write, so a resume and a
        // replay (which lower a recording's tools to its agent's) keep it.
        &[
            "--task",
            "Plan.",
            "--agent",
            "implementer",
            "--tools",
            "todo_write",
        ],
    );
    // `checked` validates the result against the shared result schema.
    let (result, lines) = checked(&out, 0);
    let errors: Vec<bool> = of_type(&lines, "tool_result")
        .iter()
        .map(|l| l["isError"].as_bool().unwrap())
        .collect();
    assert_eq!(errors, [false, false, true], "the third list is refused");
    let single = &result["details"]["results"][0];
    assert_eq!(single["todos"], second()["todos"], "{single:#}");

    // `sessions show` prints each accepted list as the model read it back.
    let id = lines[0]["runId"].as_str().unwrap().to_owned();
    let shown = sessions_ok(sessions.path(), &["show", &id]);
    assert!(
        shown.contains(
            "Task list (1/2 done):\n    [x] Read the notes\n    [~] Write the summary (Writing the summary)"
        ),
        "{shown}"
    );
    assert!(shown.contains("keep exactly one in_progress"), "{shown}");

    // A resume starts from the list the recorded run left.
    let follow_up = ScriptedModel::start(vec![text_turn("still done")]);
    let out = follow_up
        .run_command(workspace.path(), sessions.path())
        .args(["--timeout", "60", "--json", "--resume", &id])
        .args(["--task", "Anything left?"])
        .output()
        .unwrap();
    assert_nothing_runs_in(workspace.path());
    let (resumed, _) = checked(&out, 0);
    let resumed = &resumed["details"]["results"][0];
    assert_eq!(resumed["continuedFrom"], 4);
    assert_eq!(resumed["todos"], second()["todos"], "{resumed:#}");

    // A replay without a model runs the same calls to the same results.
    drop(model);
    let out = Command::new(binary("subagent"))
        .current_dir(workspace.path())
        .args(["sessions", "replay", &id, "--json", "--sessions-dir"])
        .arg(sessions.path())
        .env_remove("SUBAGENT_WORKER")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_nothing_runs_in(workspace.path());
    assert_exit(&out, 0);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["matches"], true, "{report:#}");
}

#[test]
fn a_run_without_todo_write_has_no_todos_and_one_that_never_wrote_has_an_empty_list() {
    let workspace = Workspace::new();
    let sessions = tempfile::tempdir().unwrap();
    for (tools, want) in [
        ("bash_read", None),
        ("bash_read,todo_write", Some(json!([]))),
    ] {
        let model = ScriptedModel::start(vec![text_turn("nothing to plan")]);
        let out = run_cli(
            &model,
            &workspace,
            sessions.path(),
            &["--task", "Answer.", "--tools", tools],
        );
        let (result, _) = checked(&out, 0);
        assert_eq!(
            result["details"]["results"][0].get("todos").cloned(),
            want,
            "--tools {tools}"
        );
    }
}

/// `subagent run` offered only `todo_write`, as a shell line for the pane.
fn todo_run_line(model: &ScriptedModel, dir: &std::path::Path) -> String {
    let mut args = run_args(model, dir, &[]);
    let tools = args.iter().position(|a| a == "--tools").unwrap();
    args[tools + 1] = "todo_write".into();
    shell_line(&args)
}

/// An item in progress a hostile model writes: a window-title OSC, a colour
/// CSI, a screen clear, newlines, a tab, a carriage return, an unterminated
/// clipboard OSC 52 at the end, padded to exactly 2,000 bytes (the most
/// `todo_write` takes).
fn hostile_active_form() -> String {
    let head = "\x1b]0;pwned-title\x07Running\n\tthe \x1b[31mtests\x1b[0m\x1b[2J\r";
    let tail = "\x1b]52;c;cHduZWQtY2xpcA==";
    let pad = 2_000 - head.len() - tail.len();
    let text = format!("{head}{}{tail}", "A".repeat(pad));
    assert_eq!(text.len(), 2_000);
    text
}

#[test]
fn the_status_line_shows_the_list_and_a_hostile_item_stays_one_short_line() {
    let dir = workspace();
    let record = dir.path().join("pane-record");
    let Some(tmux) = Tmux::start_or_skip("status_line_todos", dir.path(), record) else {
        return;
    };
    let hostile = list(&[
        ("Run the tests", "in_progress", &hostile_active_form()),
        ("Ship", "pending", "Shipping"),
    ]);
    let model = ScriptedModel::start_held(vec![
        tool_call_turn("t1", "todo_write", &second()),
        tool_call_turn("t2", "todo_write", &hostile),
        text_turn("planned"),
    ]);
    tmux.type_line(&todo_run_line(&model, dir.path()));
    tmux.wait_for("the status line at turn 1", Tmux::screen, |s| {
        status_line(s, "turn 1").is_some()
    });
    model.release();
    let screen = tmux.wait_for("the task list on the status line", Tmux::screen, |s| {
        status_line(s, "turn 2").is_some_and(|l| l.contains("tasks 1/2"))
    });
    let line = status_line(&screen, "turn 2").unwrap();
    assert!(
        line.contains("todo_write done · tasks 1/2: Writing the summary · "),
        "{line}"
    );

    model.release();
    let screen = tmux.wait_for("the hostile list on the status line", Tmux::screen, |s| {
        status_line(s, "turn 3").is_some_and(|l| l.contains("tasks 0/2"))
    });
    // One line: the text, cut, then the rest of the line (tokens and the
    // elapsed time, which `status_line` requires on the same row).
    let line = status_line(&screen, "turn 3").unwrap();
    let shown = format!("tasks 0/2: Running the tests{}…", "A".repeat(31));
    assert!(line.contains(&shown), "{line}");
    let after = line.split_once(&shown).map(|(_, rest)| rest).unwrap_or("");
    assert!(after.starts_with(" · ") && after.contains(" tok"), "{line}");
    assert!(
        !screen.lines().any(|l| l.starts_with("AAAA")),
        "the text wrapped onto another row:\n{screen}"
    );
    let title = tmux.run(&["display-message", "-p", "#{pane_title}"]);
    assert!(
        !String::from_utf8_lossy(&title.stdout).contains("pwned"),
        "the model set the window title"
    );

    model.release();
    let written = tmux.wait_for("the run's end in the record", Tmux::recorded, |s| {
        s.contains("exit:0")
    });
    // Nothing of the sequences reached the terminal, not even their text.
    assert!(!written.contains("pwned"), "{written:?}");
    assert!(!written.contains("cHduZWQ"), "{written:?}");
    assert!(!written.contains("\x1b]52"), "{written:?}");
    assert!(!written.contains("\x1b[2J"), "{written:?}");
    assert!(written.contains("planned"), "{written:?}");

    tmux.kill();
    assert_nothing_runs_in(dir.path());
    assert_eq!(check_sessions(&dir.path().join("sessions")), 1);
}

#[test]
fn batchs_bar_counts_the_running_tasks_lists() {
    let dir = workspace();
    let record = dir.path().join("pane-record");
    let Some(tmux) = Tmux::start_or_skip("batch_bar_todos", dir.path(), record) else {
        return;
    };
    let model = ScriptedModel::start_held(vec![
        tool_call_turn("t1", "todo_write", &second()),
        text_turn("planned"),
    ]);
    std::fs::write(
        dir.path().join("tasks.jsonl"),
        "{\"id\":\"plan\",\"task\":\"Plan.\"}\n",
    )
    .unwrap();
    let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let args: Vec<String> = [
        binary("subagent").to_string_lossy().into_owned(),
        "batch".into(),
        path("tasks.jsonl"),
        "--results".into(),
        path("results.jsonl"),
        "--sessions-dir".into(),
        path("sessions"),
        "--workspace".into(),
        path(""),
        "--provider".into(),
        "openai-chat".into(),
        "--model".into(),
        "scripted".into(),
        "--base-url".into(),
        model.base_url(),
        "--tools".into(),
        "todo_write".into(),
    ]
    .into();
    tmux.type_line(&shell_line(&args));
    model.release();
    tmux.wait_for("the bar counting the task list", Tmux::screen, |s| {
        s.lines()
            .any(|l| l.contains("running 1") && l.contains(" · tasks 1/2"))
    });
    model.release();
    let done = tmux.wait_for("the batch's end", Tmux::screen, |s| s.contains("exit:0"));
    assert!(!done.contains("tasks 1/2"), "the bar is cleared:\n{done}");
    let results = std::fs::read_to_string(dir.path().join("results.jsonl")).unwrap();
    let line: Value = serde_json::from_str(results.trim_end()).unwrap();
    assert_validates(&schema("batch-line.schema.json"), &line, "the line");
    assert_eq!(line["todos"], second()["todos"], "{line:#}");

    tmux.kill();
    assert_nothing_runs_in(dir.path());
    assert_eq!(check_sessions(&dir.path().join("sessions")), 1);
}
