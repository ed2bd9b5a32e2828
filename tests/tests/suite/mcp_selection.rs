//! MCP servers are selected by Claude Code's tool names on every surface a
//! run can be asked for, under the same ceilings, through the real binary:
//! a `serve --stdio` spawn, a real Python MCP client's `subagent` call to
//! `serve --mcp`, and a nested `subagent` call from a running model. On
//! each, a caller narrows its server's (or parent's) selection to one tool
//! and gets exactly that, and asking for a server its operator (or parent)
//! did not give is refused before anything starts. `run`, `call` and
//! `batch` are in `mcp_config.rs`. Nothing any test started survives it.

use std::path::Path;
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::ceilings::{MCP_CLIENT, StdioServer, session_files};
use super::scripted_model::{
    ScriptedModel, offered_tools, text_turn, tool_call_turn, tool_result_text,
};
use super::support::*;

/// A user config dir (`XDG_CONFIG_HOME`) whose config.toml is `text`.
fn user_config(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("subagent")).unwrap();
    std::fs::write(dir.path().join("subagent/config.toml"), text).unwrap();
    dir
}

/// Two servers; the operator's flags give only `time`.
const TWO_SERVERS: &str =
    "[mcp_servers.time]\ncommand = \"sh\"\n[mcp_servers.fs]\ncommand = \"sh\"\n";

/// The spec the fixture worker echoed as a run's output text.
fn echoed_spec(output: &str) -> Value {
    serde_json::from_str(output).unwrap_or_else(|e| panic!("{e}: {output}"))
}

#[test]
fn a_serve_stdio_spawn_narrows_to_one_mcp_tool_and_cannot_reach_another_server() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    let sessions = dir.path().join("sessions");
    let config = user_config(TWO_SERVERS);
    let mut server = StdioServer::start_with_env(
        &workspace,
        &sessions,
        &["--tools", "bash_read,mcp__time"],
        &[("XDG_CONFIG_HOME", config.path())],
    );

    for asked in [json!(["mcp__fs"]), json!(["mcp__fs__read_file"])] {
        let response = server.spawn(&json!({"task": "fixture:success", "tools": asked}));
        assert_eq!(
            response["error"]["code"], "INVALID_INPUT",
            "{asked}: {response}"
        );
        let message = response["error"]["message"].as_str().unwrap();
        assert!(message.contains("`mcp__fs"), "{message}");
    }
    assert_eq!(session_files(&sessions), Vec::<std::path::PathBuf>::new());

    let spec_of = |response: &Value| {
        let output = response["result"]["result"]["details"]["results"][0]["output"]
            .as_str()
            .unwrap_or_else(|| panic!("no output in {response:#}"))
            .to_owned();
        echoed_spec(&output)
    };
    let narrowed = server.spawn(&json!({
        "task": "fixture:echo-spec",
        "tools": ["mcp__time__get_current_time"],
    }));
    let spec = spec_of(&narrowed);
    assert_eq!(spec["tools"], json!([]), "{spec}");
    assert_eq!(spec["mcpServers"].as_array().unwrap().len(), 1, "{spec}");
    assert_eq!(spec["mcpServers"][0]["name"], "time", "{spec}");
    assert_eq!(spec["mcpServers"][0]["only"], json!(["get_current_time"]));

    // Asking nothing: the server's own selection, the whole `time` server.
    let spec = spec_of(&server.spawn(&json!({"task": "fixture:echo-spec"})));
    assert_eq!(spec["tools"], json!(["bash_read"]), "{spec}");
    assert_eq!(spec["mcpServers"][0]["name"], "time", "{spec}");
    assert_eq!(spec["mcpServers"][0]["only"], Value::Null, "{spec}");
    server.stop();
    assert_nothing_runs_in(&workspace);
}

#[test]
fn a_serve_mcp_call_narrows_to_one_mcp_tool_and_cannot_reach_another_server() {
    let Some(python) = super::serve_mcp::mcp_python("mcp_selection_serve_mcp") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(&workspace).unwrap();
    let script = dir.path().join("client.py");
    std::fs::write(&script, MCP_CLIENT).unwrap();
    let config = user_config(TWO_SERVERS);
    let calls = json!([
        {"task": "fixture:success", "tools": ["mcp__fs"]},
        {"task": "fixture:success", "tools": ["mcp__fs__read_file"]},
        {"task": "fixture:echo-spec", "tools": ["mcp__time__get_current_time"]},
    ]);
    let out = Command::new(&python)
        .arg(&script)
        .arg(binary("subagent"))
        .arg(calls.to_string())
        .args(["serve", "--mcp", "--worker", FIXTURE])
        .args([
            "--model",
            "fixture-model",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ])
        .args(["--tools", "bash_read,mcp__time"])
        .arg("--workspace")
        .arg(&workspace)
        .arg("--sessions-dir")
        .arg(&sessions)
        .env("XDG_CONFIG_HOME", config.path())
        .env_remove("OPENAI_API_KEY")
        .current_dir(&workspace)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_nothing_runs_in(&workspace);
    assert!(
        out.status.success(),
        "client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report.len(), 3, "{report:#?}");
    for refused in &report[..2] {
        let text = refused["texts"][0].as_str().unwrap();
        assert!(refused["isError"].as_bool().unwrap(), "{refused}");
        assert!(
            text.contains("INVALID_INPUT") && text.contains("`mcp__fs"),
            "{text}"
        );
    }
    let narrowed = &report[2];
    assert!(!narrowed["isError"].as_bool().unwrap(), "{narrowed}");
    let text = narrowed["texts"][0].as_str().unwrap();
    let spec = echoed_spec(text);
    assert_eq!(spec["mcpServers"][0]["name"], "time", "{spec}");
    assert_eq!(spec["mcpServers"][0]["only"], json!(["get_current_time"]));
    assert_eq!(spec["tools"], json!([]), "{spec}");
}

fn fixture_server() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/worker/tests/fixtures/mcp_fixture.py")
}

#[test]
fn a_nested_call_narrows_its_parents_server_to_one_tool_and_cannot_reach_another() {
    let fixture = fixture_server();
    let fixtures = fixture.parent().unwrap().display().to_string();
    let mut config = String::new();
    for name in ["ok", "other"] {
        config.push_str(&format!(
            "[mcp_servers.{name}]\ncommand = \"/usr/bin/python3\"\nargs = [\"{}\", \"ok\"]\n\
             read_only = [\"{fixtures}\"]\n\n",
            fixture.display()
        ));
    }
    let config = user_config(&config);
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let ask = |id: &str, tools: Value| {
        tool_call_turn(
            id,
            "subagent",
            &json!({"agent": "general", "task": "Use the server.", "tools": tools}),
        )
    };
    let _ = binary("subagent");
    let model = ScriptedModel::start(vec![
        ask("call_other", json!(["mcp__other"])),
        ask("call_echo", json!(["mcp__ok__echo"])),
        tool_call_turn("echo", "mcp__ok__echo", &json!({"text": "from the child"})),
        text_turn("Child: echoed."),
        text_turn("Root: finished."),
    ]);
    let out = model
        .run_command(workspace.path(), sessions.path())
        .args(["--json", "--quiet", "--task", "Delegate."])
        .args(["--max-depth", "2", "--tools", "subagent,mcp__ok"])
        .env("XDG_CONFIG_HOME", config.path())
        .output()
        .unwrap();
    assert_nothing_runs_in(workspace.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["content"][0]["text"], "Root: finished.", "{result}");
    assert_eq!(model.replies_left(), 0);

    let requests = model.requests();
    // The parent has `ok` whole and not `other`.
    let parent_tools = offered_tools(&requests[0]);
    assert!(
        parent_tools.iter().any(|t| t == "mcp__ok__env")
            && !parent_tools.iter().any(|t| t.starts_with("mcp__other")),
        "{parent_tools:?}"
    );
    let refused = tool_result_text(&requests[1], "call_other");
    assert!(
        refused.starts_with("INVALID_INPUT: ") && refused.contains("`mcp__other`"),
        "{refused}"
    );
    // The child is offered the one tool it was given, and its call answers.
    assert_eq!(
        offered_tools(&requests[2]),
        vec!["mcp__ok__echo".to_owned()]
    );
    assert_eq!(tool_result_text(&requests[3], "echo"), "from the child");
    assert!(
        tool_result_text(&requests[4], "call_echo").contains("Child: echoed."),
        "{}",
        requests[4]
    );
}
