//! A run keeps the workspace it was admitted with (issue 32, attack 5):
//! an MCP call is admitted with `workspace: "sub"`, a real directory; then
//! `sub` is swapped for a symlink to a directory outside the server's
//! workspace (in the attack another call's python did it; here the test
//! does, at a moment it chooses: the model's first reply is held until the
//! swap is done); then the first call's python writes a file. It must not
//! land outside.
//!
//! `serve --mcp` is driven with raw JSON-RPC lines, as an MCP client sends
//! them. Its calls also pass the admission that refuses a workspace holding
//! the user's config dir.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::*;

/// `subagent serve --mcp` over pipes.
struct McpServer {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl McpServer {
    fn start(model: &ScriptedModel, workspace: &Path, sessions: &Path) -> Self {
        Self::start_with(model, workspace, sessions, &[])
    }

    /// [`Self::start`] with `env` added to the server's environment.
    fn start_with(
        model: &ScriptedModel,
        workspace: &Path,
        sessions: &Path,
        env: &[(&str, &Path)],
    ) -> Self {
        let _ = binary("subagent-worker");
        let mut child = Command::new(binary("subagent"))
            .args([
                "serve",
                "--mcp",
                "--provider",
                "openai-chat",
                "--model",
                "scripted",
            ])
            .arg("--base-url")
            .arg(model.base_url())
            .args(["--tools", "python_execute", "--timeout", "60"])
            .arg("--workspace")
            .arg(workspace)
            .arg("--sessions-dir")
            .arg(sessions)
            .env_remove("SUBAGENT_WORKER")
            .envs(env.iter().copied())
            .current_dir(workspace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut server = Self {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
        };
        server.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "swap", "version": "0"}}}),
        );
        assert!(server.answer(1)["result"]["serverInfo"].is_object());
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(format!("{message}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// The response to request `id` (notifications before it are skipped).
    fn answer(&mut self, id: u64) -> Value {
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "the server closed stdout before answering {id}");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    /// Closes stdin and waits for the server to exit.
    fn close(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "serve --mcp exited {status}");
    }
}

#[test]
fn a_workspace_swapped_for_a_symlink_after_admission_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let code =
        "import os\nopen('escaped.txt', 'w').write('written')\nprint('wrote in', os.getcwd())";
    let model = ScriptedModel::start_held(vec![
        tool_call_turn("call_write", "python_execute", &json!({ "code": code })),
        text_turn("done"),
    ]);
    let mut server = McpServer::start(&model, &ws, &dir.path().join("sessions"));
    server.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "subagent",
        "arguments": {"task": "Write the file.", "workspace": "sub"}}}),
    );
    // The run was admitted and its worker asked the model: swap now.
    assert!(
        model.wait_for_requests(1, Duration::from_secs(60)),
        "the run never asked the model"
    );
    std::fs::rename(ws.join("sub"), ws.join("sub.admitted")).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("sub")).unwrap();
    model.release();
    model.release();
    let answer = server.answer(2);
    server.close();
    assert!(
        !outside.join("escaped.txt").exists(),
        "the tool wrote outside the workspace: {answer:#}"
    );
    // The session file says what the tool was told.
    let sessions = jsonl_files(&dir.path().join("sessions"));
    let run = sessions
        .iter()
        .find(|f| !f.to_string_lossy().contains("/serve/"))
        .unwrap_or_else(|| panic!("no run session in {sessions:?}"));
    let lines = check_session_file(run);
    let result = tool_result(&lines);
    let output = result["output"].as_str().unwrap();
    assert!(
        result["isError"] == true && output.contains("replaced"),
        "{result:#}"
    );
    assert!(!ws.join("sub.admitted/escaped.txt").exists());
    assert_nothing_runs_in(&ws);
    assert_nothing_runs_in(&outside);
}

#[test]
fn an_mcp_call_in_a_home_workspace_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let config_home = home.join(".config");
    std::fs::create_dir_all(config_home.join("subagent")).unwrap();
    let model = ScriptedModel::start(vec![text_turn("done")]);
    let mut server = McpServer::start_with(
        &model,
        &home,
        &dir.path().join("sessions"),
        &[
            ("HOME", home.as_path()),
            ("XDG_CONFIG_HOME", config_home.as_path()),
        ],
    );
    server.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "subagent", "arguments": {"task": "Say hi."}}}),
    );
    let answer = server.answer(2);
    server.close();
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(answer["result"]["isError"], true, "{answer:#}");
    assert!(text.starts_with("INVALID_INPUT"), "{text}");
    assert!(text.contains(".config/subagent"), "{text}");
    assert!(model.requests().is_empty(), "the call reached the model");
    assert_nothing_runs_in(&home);
}
