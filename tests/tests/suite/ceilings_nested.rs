//! A child never gets more than its parent, through the real CLI, the
//! real worker and a scripted model: a nested `subagent` call that asks for
//! more memory or a tool its parent lacks is refused with INVALID_INPUT,
//! and an agent whose own list is longer than the parent's runs with only
//! the parent's tools. Nothing the test started survives it.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::ceilings::session_files;
use super::scripted_model::{
    ScriptedModel, offered_tools, text_turn, tool_call_turn, tool_result_text,
};
use super::support::*;

#[test]
fn a_nested_call_gets_at_most_its_parents_tools_and_limits() {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let ask = |id: &str, arguments: Value| tool_call_turn(id, "subagent", &arguments);
    // Built before the model starts: the model server's lifetime is
    // bounded, and a build on a loaded machine would eat into it.
    let _ = binary("subagent");
    let model = ScriptedModel::start(vec![
        ask(
            "call_mem",
            json!({"agent": "general", "task": "More memory.", "limits": {"memory": "20G"}}),
        ),
        ask(
            "call_tools",
            json!({"agent": "general", "task": "More tools.", "tools": ["python_execute"]}),
        ),
        ask(
            "call_net",
            json!({"agent": "general", "task": "Lower.", "limits": {"memory": "128M"}}),
        ),
        text_turn("Child: done with what I was given."),
        ask(
            "call_impl",
            json!({"agent": "implementer", "task": "Implement it."}),
        ),
        text_turn("Implementer: done."),
        text_turn("Root: finished."),
    ]);
    let out = model
        .run_command(workspace.path(), sessions.path())
        .args([
            "--json",
            "--quiet",
            "--task",
            "Delegate.",
            "--max-depth",
            "2",
        ])
        .args(["--tools", "subagent", "--memory", "256M"])
        .output()
        .unwrap();
    assert_nothing_runs_in(workspace.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{stdout}");
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["content"][0]["text"], "Root: finished.");
    assert_eq!(model.replies_left(), 0);

    let requests = model.requests();
    // Asked more memory than the parent: refused before anything ran.
    let memory = tool_result_text(&requests[1], "call_mem");
    assert!(memory.starts_with("INVALID_INPUT: "), "{memory}");
    assert!(
        memory.contains("limits.memory = 20G is above the parent run's ceiling of 256M"),
        "{memory}"
    );
    // Asked a tool the parent lacks: refused, naming what the parent has.
    let tools = tool_result_text(&requests[2], "call_tools");
    assert!(tools.starts_with("INVALID_INPUT: "), "{tools}");
    assert!(
        tools.contains("`python_execute`") && tools.contains("(`subagent`)"),
        "{tools}"
    );
    // Lower memory: the grandchild ran (requests[3] is its turn) with no
    // tool (general's list has none of the parent's, and `subagent` is
    // taken away at the depth limit).
    assert_eq!(offered_tools(&requests[3]), Vec::<String>::new());
    // implementer (every tool) under a parent with only `subagent`: none.
    assert_eq!(offered_tools(&requests[5]), Vec::<String>::new());

    let mut headers: Vec<Value> = session_files(sessions.path())
        .iter()
        .map(|f| check_session_file(f)[0].clone())
        .collect();
    headers.sort_by_key(|h| h["depth"].as_u64());
    assert_eq!(headers.len(), 3, "the root and two grandchildren");
    for child in &headers[1..] {
        assert_eq!(child["depth"], 2);
        assert!(
            child["limits"]["memoryBytes"].as_u64().unwrap() <= 256 << 20,
            "{child}"
        );
        assert_eq!(child["tools"], json!([]), "{child}");
    }
    let memories: Vec<u64> = headers[1..]
        .iter()
        .map(|h| h["limits"]["memoryBytes"].as_u64().unwrap())
        .collect();
    assert!(memories.contains(&(128 << 20)), "{memories:?}");
}
