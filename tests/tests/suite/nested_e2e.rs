//! Nested subagents end to end: the real `subagent` CLI and supervisor, the
//! real `subagent-worker` for the child and its grandchild, both talking to
//! one scripted model ([`super::scripted_model`]). The parent waits for its
//! grandchild, so the scripted turns are served in a known order: the
//! parent's turn that calls `subagent`, the grandchild's turns, then the
//! parent's next turn. Depth refusals use the fixture worker, which asks for
//! a subagent whether or not the tool was offered.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::scripted_model::{ScriptedModel, offered_tools, text_turn, tool_call_turn};
use super::support::*;

/// `subagent run` against `model` in `workspace`, session files under
/// `sessions`; `extra` are more flags.
fn cli(model: &ScriptedModel, workspace: &Path, sessions: &Path, extra: &[&str]) -> Command {
    let mut c = model.run_command(workspace, sessions);
    c.args(["--json", "--quiet"]).args(extra);
    c
}

fn result_of(out: &Output, expected_exit: i32) -> Value {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(expected_exit), "stderr: {stderr}");
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is no JSON result ({e}); stderr: {stderr}"));
    assert_valid_result(&json);
    json
}

fn session_file_of(result: &Value) -> PathBuf {
    PathBuf::from(
        result["details"]["results"][0]["sessionFile"]
            .as_str()
            .unwrap_or_else(|| panic!("no session file in {result:#}")),
    )
}

fn of_type<'a>(lines: &'a [Value], ty: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == ty).collect()
}

/// The lifecycle lines in `lines` that belong to another run than the
/// file's own: its subagents'.
fn nested_lifecycle<'a>(lines: &'a [Value], own_file: &Path) -> Vec<&'a Value> {
    of_type(lines, "agent_event")
        .into_iter()
        .filter(|l| l["sessionFile"].as_str() != own_file.to_str())
        .collect()
}

fn session_files_in(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                found.push(path);
            }
        }
    }
    found
}

#[test]
fn a_depth_two_tree_records_the_grandchild_in_both_session_files_and_adds_its_usage() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        tool_call_turn(
            "call_sub",
            "subagent",
            &json!({"agent": "general", "task": "Count the files.", "maxTurns": 3}),
        ),
        text_turn("Grandchild: there are 3 files."),
        text_turn("Root: my helper found 3 files."),
    ]);
    let out = cli(
        &model,
        workspace.path(),
        sessions.path(),
        &[
            "--task",
            "Delegate the counting.",
            "--max-depth",
            "2",
            "--tools",
            "subagent,bash_find",
        ],
    )
    .output()
    .unwrap();
    assert_nothing_runs_in(workspace.path());
    let json = result_of(&out, 0);
    assert_eq!(json["content"][0]["text"], "Root: my helper found 3 files.");
    assert_eq!(model.replies_left(), 0);

    // Who asked what: the root was offered `subagent`; the grandchild, at
    // the depth limit, was not, and got the task the root gave it.
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(offered_tools(&requests[0]), vec!["bash_find", "subagent"]);
    assert!(!offered_tools(&requests[1]).contains(&"subagent".to_owned()));
    let grandchild_task = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    assert_eq!(grandchild_task["content"], "Count the files.");
    // The root's second turn got the grandchild's answer as the tool result.
    let tool_message = requests[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(tool_message["content"], "Grandchild: there are 3 files.");

    // The root's session file: the call, its result, and the grandchild's
    // lifecycle lines (start, then complete) naming its own file.
    let root_file = session_file_of(&json);
    let root_lines = check_session_file(&root_file);
    assert_reaped(&root_lines);
    let call = of_type(&root_lines, "tool_call");
    assert_eq!(call.len(), 1);
    assert_eq!(call[0]["name"], "subagent");
    let result = of_type(&root_lines, "tool_result");
    assert_eq!(result[0]["output"], "Grandchild: there are 3 files.");
    assert_eq!(result[0]["isError"], false);
    let nested = nested_lifecycle(&root_lines, &root_file);
    let events: Vec<&str> = nested
        .iter()
        .map(|l| l["eventType"].as_str().unwrap())
        .collect();
    assert_eq!(events, vec!["subagent:start", "subagent:complete"]);

    // The grandchild's own file: valid, one level deeper, pointing at its
    // parent, with its reserved turns, and its worker reaped.
    let grandchild_file = PathBuf::from(nested[0]["sessionFile"].as_str().unwrap());
    assert_ne!(grandchild_file, root_file);
    let grandchild_lines = check_session_file(&grandchild_file);
    assert_reaped(&grandchild_lines);
    let header = &grandchild_lines[0];
    assert_eq!(header["depth"], 2);
    assert_eq!(header["parentSession"], root_file.to_str().unwrap());
    assert_eq!(header["maxTurns"], 3);
    assert_eq!(session_files_in(sessions.path()).len(), 2);

    // Usage: the root's two turns plus the grandchild's one, in the result
    // and in the root's closing lifecycle line.
    let usage = &json["details"]["results"][0]["usage"];
    assert_eq!(usage["turns"], 3, "{usage}");
    assert_eq!(usage["input"], 60, "{usage}");
    assert_eq!(root_lines.last().unwrap()["usage"]["turns"], 3);
}

#[test]
fn a_spawn_the_parent_cannot_afford_is_refused_before_the_grandchild_calls_the_model() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        tool_call_turn(
            "call_sub",
            "subagent",
            &json!({"agent": "general", "task": "Do a long job.", "maxTurns": 5}),
        ),
        text_turn("I did it myself."),
    ]);
    let out = cli(
        &model,
        workspace.path(),
        sessions.path(),
        &[
            "--task",
            "Try to delegate.",
            "--max-depth",
            "2",
            "--max-turns",
            "2",
            "--tools",
            "subagent",
        ],
    )
    .output()
    .unwrap();
    assert_nothing_runs_in(workspace.path());
    let json = result_of(&out, 0);
    assert_eq!(json["content"][0]["text"], "I did it myself.");

    // Two model requests, both the root's: the second carries the refusal.
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "the grandchild never called the model");
    let tool_message = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "call_sub")
        .unwrap_or_else(|| panic!("request 2 is not the root's: {:#}", requests[1]));
    let refusal = tool_message["content"].as_str().unwrap();
    assert!(
        refusal.starts_with("SUBAGENT_SPAWN_DENIED"),
        "refusal: {refusal}"
    );
    assert!(
        refusal.contains("5 model turns") && refusal.contains("1 left"),
        "the refusal gives the figures: {refusal}"
    );

    let root_file = session_file_of(&json);
    let lines = check_session_file(&root_file);
    assert_reaped(&lines);
    let result = of_type(&lines, "tool_result");
    assert_eq!(result[0]["isError"], true);
    assert!(nested_lifecycle(&lines, &root_file).is_empty());
    assert_eq!(session_files_in(sessions.path()), vec![root_file]);
}

#[test]
fn a_spawn_at_the_depth_limit_is_refused_even_without_the_tool() {
    let sessions = tempfile::tempdir().unwrap();
    // Default --max-depth 1: the child runs at the limit and its subagent
    // would be at depth 2. The fixture worker asks anyway.
    let out = fixture_cli(sessions.path())
        .args(["--task", "fixture:spawn-subagent", "--json"])
        .output()
        .unwrap();
    let json = result_of(&out, 0);
    assert_children_reaped(&json);
    let text = json["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("SUBAGENT_DEPTH_EXCEEDED|true|fixture-call|"),
        "{text}"
    );
    assert!(
        text.contains("depth 2") && text.contains("limit is 1"),
        "{text}"
    );
    let root_file = session_file_of(&json);
    let lines = check_session_file(&root_file);
    assert!(
        of_type(&lines, "log").iter().any(|l| l["message"]
            .as_str()
            .unwrap()
            .contains("SUBAGENT_DEPTH_EXCEEDED")),
        "the refusal is in the session file"
    );
    assert_eq!(session_files_in(sessions.path()), vec![root_file]);
}

#[test]
fn the_same_spawn_below_the_depth_limit_runs_through_the_supervisor() {
    let sessions = tempfile::tempdir().unwrap();
    let out = fixture_cli(sessions.path())
        .args([
            "--task",
            "fixture:spawn-subagent",
            "--json",
            "--max-depth",
            "2",
        ])
        .output()
        .unwrap();
    let json = result_of(&out, 0);
    assert_children_reaped(&json);
    let text = json["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        text,
        "none|false|fixture-call|fixture done: fixture:success"
    );
    let root_file = session_file_of(&json);
    let lines = check_session_file(&root_file);
    let nested = nested_lifecycle(&lines, &root_file);
    assert_eq!(nested.len(), 2, "{nested:#?}");
    let grandchild = PathBuf::from(nested[1]["sessionFile"].as_str().unwrap());
    assert_reaped(&check_session_file(&grandchild));
    // The fixture's own turn and its grandchild's: one each.
    assert_eq!(json["details"]["results"][0]["usage"]["turns"], 2);
}

/// A root that delegates to a child whose model request is held (never
/// answered), with `--timeout <timeout>`; the model is already released.
fn delegate_to_a_held_grandchild(
    workspace: &Path,
    sessions: &Path,
    timeout: &str,
) -> (ScriptedModel, Child) {
    let model = ScriptedModel::start_held(vec![
        tool_call_turn(
            "call_sub",
            "subagent",
            &json!({"agent": "general", "task": "Take your time."}),
        ),
        text_turn("never sent"),
    ]);
    let root = cli(
        &model,
        workspace,
        sessions,
        &[
            "--task",
            "Delegate and wait.",
            "--max-depth",
            "2",
            "--tools",
            "subagent",
            "--timeout",
            timeout,
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    model.release();
    (model, root)
}

fn interrupt(child: &Child) {
    // SAFETY: a plain kill(2) of a process this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
}

#[test]
fn interrupting_the_root_while_a_grandchild_runs_ends_every_descendant() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let (model, root) = delegate_to_a_held_grandchild(workspace.path(), sessions.path(), "60");
    // The grandchild's first request arrived (and is held): it is running.
    assert!(
        model.wait_for_requests(2, Duration::from_secs(30)),
        "the grandchild never called the model"
    );
    interrupt(&root);
    let out = root.wait_with_output().unwrap();
    assert_nothing_runs_in(workspace.path());
    let json = result_of(&out, 130);
    assert_eq!(json["details"]["error"]["code"], "SUBAGENT_CANCELLED");
    assert_children_reaped(&json);

    let root_file = session_file_of(&json);
    let lines = check_session_file(&root_file);
    assert_eq!(lines.last().unwrap()["eventType"], "subagent:aborted");
    let nested = nested_lifecycle(&lines, &root_file);
    let events: Vec<&str> = nested
        .iter()
        .map(|l| l["eventType"].as_str().unwrap())
        .collect();
    assert_eq!(events, vec!["subagent:start", "subagent:aborted"]);
    let grandchild_lines =
        check_session_file(Path::new(nested[0]["sessionFile"].as_str().unwrap()));
    assert_reaped(&grandchild_lines);
    assert_eq!(model.requests().len(), 2, "nothing ran after the interrupt");
}

#[test]
fn the_roots_wall_timeout_while_a_grandchild_runs_ends_every_descendant() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let (model, root) = delegate_to_a_held_grandchild(workspace.path(), sessions.path(), "3");
    assert!(
        model.wait_for_requests(2, Duration::from_secs(30)),
        "the grandchild never called the model"
    );
    // The grandchild's reply stays held: only the root's timeout ends it.
    let out = root.wait_with_output().unwrap();
    assert_nothing_runs_in(workspace.path());
    let json = result_of(&out, 3);
    assert_eq!(json["details"]["error"]["code"], "SUBAGENT_TIMEOUT");
    assert_children_reaped(&json);
    let root_file = session_file_of(&json);
    let lines = check_session_file(&root_file);
    let nested = nested_lifecycle(&lines, &root_file);
    let events: Vec<&str> = nested
        .iter()
        .map(|l| l["eventType"].as_str().unwrap())
        .collect();
    assert_eq!(
        events,
        vec!["subagent:start", "subagent:aborted"],
        "the grandchild was cancelled with its parent, not left to time out"
    );
    assert_reaped(&check_session_file(Path::new(
        nested[0]["sessionFile"].as_str().unwrap(),
    )));
}

#[test]
fn run_help_offers_the_subagent_tool_and_the_depth_flag() {
    let out = Command::new(binary("subagent"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("\n  subagent "), "{help}");
    assert!(help.contains("--max-depth"), "{help}");
}

/// The decision in docs/decisions.md ("implementer and the subagent tool"):
/// `implementer` has every tool, `subagent` included, and the depth limit
/// alone takes `subagent` away. `general` keeps its list: it gets
/// `subagent` only when `--tools` names it.
#[test]
fn implementer_is_given_the_subagent_tool_below_the_depth_limit_and_not_at_it() {
    use subagent_protocol::tool_names::BUILTIN_TOOLS;
    for (agent, max_depth, gets_subagent) in [
        ("implementer", "1", false),
        ("implementer", "2", true),
        ("general", "2", false),
    ] {
        let workspace = tempfile::tempdir().unwrap();
        let sessions = tempfile::tempdir().unwrap();
        let model = ScriptedModel::start(vec![text_turn("Changed nothing.")]);
        let out = cli(
            &model,
            workspace.path(),
            sessions.path(),
            &["--agent", agent, "--max-depth", max_depth],
        )
        .args(["--task", "Make the change."])
        .output()
        .unwrap();
        assert_nothing_runs_in(workspace.path());
        let json = result_of(&out, 0);
        assert_children_reaped(&json);
        let case = format!("{agent} under --max-depth {max_depth}");
        // What the supervisor gave the worker (the session header) ...
        let header = check_session_file(&session_file_of(&json))[0].clone();
        let given: Vec<String> = serde_json::from_value(header["tools"].clone()).unwrap();
        assert_eq!(
            given.contains(&"subagent".to_owned()),
            gets_subagent,
            "{case}: {given:?}"
        );
        if agent == "implementer" {
            let mut want: Vec<&str> = BUILTIN_TOOLS.to_vec();
            if gets_subagent {
                want.push("subagent");
            }
            assert_eq!(given, want, "{case}");
        }
        // ... and what the worker offered the model.
        let offered = offered_tools(&model.requests()[0]);
        assert_eq!(
            offered.contains(&"subagent".to_owned()),
            gets_subagent,
            "{case}: {offered:?}"
        );
    }
}
