//! The tools that act (issue 35) end to end: the real `subagent` CLI, the
//! real worker and a scripted model that calls `write_file`, `edit_file`,
//! `multi_edit`, `list_dir`, `bash` and `todo_write` with Claude Code's
//! parameters; the test reads what the model was told, what the session
//! file recorded and what the workspace holds after the run. Then the
//! attacks on the writing tools: a path outside the workspace, a symlink
//! out, `.git` and `.claude`, each refused with nothing changed.

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::scripted_model::{ScriptedModel, offered_tools, text_turn, tool_call_turn};
use super::support::*;
use super::tools_e2e::{Workspace, run_cli};

/// The `tool_result` lines of a run, by call id: (output, isError).
pub(super) fn results(lines: &[Value]) -> Vec<(String, String, bool)> {
    of_type(lines, "tool_result")
        .iter()
        .map(|l| {
            (
                l["callId"].as_str().unwrap().to_owned(),
                l["output"].as_str().unwrap().to_owned(),
                l["isError"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn read(workspace: &Workspace, path: &str) -> String {
    std::fs::read_to_string(workspace.path().join(path)).unwrap()
}

const ACTING: &str = "write_file,edit_file,multi_edit,list_dir,bash,todo_write";

#[test]
fn each_tool_that_acts_runs_through_the_cli_and_the_workspace_shows_it() {
    let workspace = Workspace::new();
    let sessions = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        tool_call_turn(
            "todo",
            "todo_write",
            &json!({"todos": [
                {"content": "Add the module", "status": "in_progress", "activeForm": "Adding the module"},
                {"content": "Run it", "status": "pending", "activeForm": "Running it"}
            ]}),
        ),
        tool_call_turn(
            "write",
            "write_file",
            &json!({"file_path": "src/extra/mod.rs", "content": "pub fn six() -> u32 {\n    6\n}\n"}),
        ),
        tool_call_turn(
            "edit",
            "edit_file",
            &json!({"file_path": "src/lib.rs", "old_string": "    42", "new_string": "    43"}),
        ),
        tool_call_turn(
            "multi",
            "multi_edit",
            &json!({"file_path": "notes.txt", "edits": [
                {"old_string": "alpha", "new_string": "ALPHA"},
                {"old_string": "gamma", "new_string": "GAMMA", "replace_all": true}
            ]}),
        ),
        tool_call_turn(
            "ls",
            "list_dir",
            &json!({"path": "src", "ignore": ["main.rs"]}),
        ),
        tool_call_turn(
            "bash",
            "bash",
            &json!({"command": "cat src/extra/mod.rs | wc -l && echo $((6 * 7)) && pwd", "description": "count and compute", "timeout": 20000}),
        ),
        tool_call_turn(
            "bash_fail",
            "bash",
            &json!({"command": "echo to-stderr >&2; exit 7"}),
        ),
        text_turn("done"),
    ]);
    let out = run_cli(
        &model,
        &workspace,
        sessions.path(),
        &["--task", "Act.", "--tools", ACTING],
    );
    let (_, lines) = checked(&out, 0);
    let results = results(&lines);
    let ids: Vec<&str> = results.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        ["todo", "write", "edit", "multi", "ls", "bash", "bash_fail"]
    );
    let output = |i: usize| results[i].1.as_str();
    let errors: Vec<bool> = results.iter().map(|r| r.2).collect();
    assert_eq!(
        errors,
        [false, false, false, false, false, false, true],
        "{results:#?}"
    );

    assert_eq!(
        output(0),
        "Task list (0/2 done):\n[~] Add the module (Adding the module)\n[ ] Run it\n"
    );
    assert_eq!(
        output(1),
        "File created successfully at: src/extra/mod.rs (30 bytes)"
    );
    assert_eq!(
        output(2),
        "The file src/lib.rs has been updated: 1 replacement (1 edit)."
    );
    assert_eq!(
        output(3),
        "The file notes.txt has been updated: 2 replacements (2 edits)."
    );
    assert_eq!(
        output(4),
        "`src`: 2 entries (1 ignored)\nextra/\tdir\nlib.rs\tfile\t50 bytes\n"
    );
    assert!(
        output(5).starts_with("exit code 0\n--- stdout ---\n3\n42\n"),
        "{}",
        output(5)
    );
    assert!(
        output(6).contains("exit code 7") && output(6).contains("to-stderr"),
        "{}",
        output(6)
    );

    // The run's changes reached the workspace (applied from its layer).
    assert_eq!(
        read(&workspace, "src/extra/mod.rs"),
        "pub fn six() -> u32 {\n    6\n}\n"
    );
    assert_eq!(
        read(&workspace, "src/lib.rs"),
        "//! The answer.\npub fn answer() -> u32 {\n    43\n}\n"
    );
    assert_eq!(
        read(&workspace, "notes.txt"),
        "ALPHA\nbeta\nneedle: the line to find\nGAMMA\n"
    );

    // Offered exactly the chosen tools, each with Claude Code's parameters.
    let requests = model.requests();
    let mut want: Vec<String> = ACTING.split(',').map(str::to_owned).collect();
    want.sort();
    assert_eq!(offered_tools(&requests[0]), want);
    let parameters = |name: &str| -> Vec<String> {
        let tool = requests[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == name)
            .unwrap();
        let mut keys: Vec<String> = tool["function"]["parameters"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        keys.sort();
        keys
    };
    assert_eq!(
        parameters("bash"),
        ["command", "description", "run_in_background", "timeout"]
    );
    assert_eq!(parameters("write_file"), ["content", "file_path"]);
    assert_eq!(
        parameters("edit_file"),
        ["file_path", "new_string", "old_string", "replace_all"]
    );
    assert_eq!(parameters("multi_edit"), ["edits", "file_path"]);
    assert_eq!(parameters("list_dir"), ["ignore", "path"]);
    assert_eq!(parameters("todo_write"), ["todos"]);
}

/// What a refused write must leave: the file outside, `.git/config` and
/// `.claude` as they were.
fn assert_untouched(workspace: &Workspace, outside: &Path) {
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "secret\n"
    );
    let mut names: Vec<String> = std::fs::read_dir(outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["secret.txt"]);
    assert_eq!(read(workspace, ".git/config"), "[core]\n\tbare = false\n");
    assert!(!workspace.path().join(".git/hooks").exists());
    assert!(!workspace.path().join(".claude").exists());
}

#[test]
fn writes_outside_through_a_symlink_out_and_into_git_are_refused() {
    let workspace = Workspace::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret\n").unwrap();
    std::fs::create_dir(workspace.path().join(".git")).unwrap();
    std::fs::write(
        workspace.path().join(".git/config"),
        "[core]\n\tbare = false\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), workspace.path().join("out")).unwrap();
    std::os::unix::fs::symlink(
        workspace.path().join(".git"),
        workspace.path().join("inside-git"),
    )
    .unwrap();
    let secret = outside.path().join("secret.txt").display().to_string();
    let attacks: Vec<(&str, &str, Value)> = vec![
        (
            "abs",
            "write_file",
            json!({"file_path": secret, "content": "pwned"}),
        ),
        (
            "dotdot",
            "write_file",
            json!({"file_path": format!("../{}/x.txt", outside.path().file_name().unwrap().to_string_lossy()), "content": "pwned"}),
        ),
        (
            "link_new",
            "write_file",
            json!({"file_path": "out/new.txt", "content": "pwned"}),
        ),
        (
            "link_edit",
            "edit_file",
            json!({"file_path": "out/secret.txt", "old_string": "secret", "new_string": "pwned"}),
        ),
        (
            "link_multi",
            "multi_edit",
            json!({"file_path": "out/secret.txt", "edits": [{"old_string": "secret", "new_string": "pwned"}]}),
        ),
        (
            "git_config",
            "edit_file",
            json!({"file_path": ".git/config", "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = touch pwned"}),
        ),
        (
            "git_hook",
            "write_file",
            json!({"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}),
        ),
        (
            "git_via_link",
            "write_file",
            json!({"file_path": "inside-git/config", "content": "[core]\n\thooksPath = x\n"}),
        ),
        (
            "claude_agent",
            "write_file",
            json!({"file_path": ".claude/agents/evil.md", "content": "---\nname: evil\n---\n"}),
        ),
    ];
    let mut turns: Vec<Vec<u8>> = attacks
        .iter()
        .map(|(id, tool, arguments)| tool_call_turn(id, tool, arguments))
        .collect();
    turns.push(text_turn("done"));
    let model = ScriptedModel::start(turns);
    // In place, so a write that got through would be in the workspace now
    // (the copy-on-write layer refuses .git and .claude on its own).
    let sessions = tempfile::tempdir().unwrap();
    let out = run_cli(
        &model,
        &workspace,
        sessions.path(),
        &[
            "--task",
            "Attack.",
            "--tools",
            "write_file,edit_file,multi_edit",
            "--isolation",
            "none",
        ],
    );
    let (_, lines) = checked(&out, 0);
    let results = results(&lines);
    assert_eq!(results.len(), attacks.len(), "{results:#?}");
    for ((id, output, is_error), (_, _, _)) in results.iter().zip(&attacks) {
        assert!(*is_error, "{id} got through: {output}");
        let said_why = output.contains("is outside it") || output.contains("which the host trusts");
        assert!(said_why, "{id}: {output}");
    }
    assert_untouched(&workspace, outside.path());
}
