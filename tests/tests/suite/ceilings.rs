//! The operator's limits are ceilings, through the real binaries: a
//! `serve --stdio` request and a real Python MCP client's `subagent` call
//! each ask for more of every limit, for more tools, for the network, for
//! another workspace, model or provider, and each ask is refused with
//! INVALID_INPUT naming the limit and the ceiling; what is let through
//! (lower limits, an agent with more tools than the operator's) runs with a
//! session header never above the operator's flags. Nested calls are in
//! `ceilings_nested.rs`, `call` and `batch` in `ceilings_call_batch.rs`.
//! Nothing any test started survives it.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::*;

/// The server's flags: every limit below its default, two tools.
const SERVER_FLAGS: [&str; 22] = [
    "--memory",
    "256M",
    "--pids",
    "64",
    "--timeout",
    "60s",
    "--idle-timeout",
    "30s",
    "--tool-memory",
    "128M",
    "--tool-timeout",
    "20s",
    "--max-turns",
    "5",
    "--max-cost",
    "0.01",
    "--max-depth",
    "1",
    "--return-limit",
    "64K",
    "--tools",
    "bash_read,bash_find",
];

/// One ask above each ceiling of [`SERVER_FLAGS`] as spawn params, and the
/// fragments its refusal must hold.
fn asks_above(elsewhere: &Path) -> Vec<(Value, Vec<String>)> {
    let limit = |name: &str, value: Value, ceiling: &str, flag: &str| {
        (
            json!({ "limits": { name: value } }),
            vec![
                format!("limits.{name}"),
                format!("at most {ceiling}"),
                flag.to_owned(),
            ],
        )
    };
    vec![
        limit("memory", json!("20G"), "256M", "--memory"),
        limit("pids", json!(100_000), "64", "--pids"),
        limit("timeout", json!("48h"), "1m", "--timeout"),
        limit("idleTimeout", json!("48h"), "30s", "--idle-timeout"),
        limit("toolMemory", json!("20G"), "128M", "--tool-memory"),
        limit("toolTimeout", json!("48h"), "20s", "--tool-timeout"),
        limit("maxTurns", json!(1000), "5", "--max-turns"),
        limit("maxCost", json!(5000), "0.01", "--max-cost"),
        limit("maxDepth", json!(9), "1", "--max-depth"),
        limit("returnLimit", json!("1G"), "64K", "--return-limit"),
        (
            json!({"tools": ["bash_read", "python_execute"]}),
            vec!["`python_execute`".into(), "`bash_read`, `bash_find`".into()],
        ),
        (
            json!({"allowNetwork": true}),
            vec!["network is off".into(), "--allow-network".into()],
        ),
        (
            json!({"isolation": "none"}),
            vec![
                "in-place writes (isolation none)".into(),
                "--isolation none".into(),
            ],
        ),
        (
            json!({"workspace": elsewhere}),
            vec!["outside the server's workspace".into()],
        ),
        (
            json!({"workspace": ".."}),
            vec!["outside the server's workspace".into()],
        ),
        (
            json!({"model": "bigger-model"}),
            vec!["model `bigger-model` is not allowed".into()],
        ),
        (
            json!({"provider": "anthropic"}),
            vec!["is not the server's provider".into()],
        ),
    ]
}

/// A `serve --stdio` server with the fixture worker, its responses read
/// by a thread.
pub(super) struct StdioServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    next_id: u64,
}

impl StdioServer {
    fn start(workspace: &Path, sessions: &Path, flags: &[&str]) -> Self {
        Self::start_with_env(workspace, sessions, flags, &[])
    }

    /// [`Self::start`] with `env` set for the server.
    pub(super) fn start_with_env(
        workspace: &Path,
        sessions: &Path,
        flags: &[&str],
        env: &[(&str, &Path)],
    ) -> Self {
        let mut child = Command::new(binary("subagent"))
            .args(["serve", "--stdio", "--worker", FIXTURE])
            .args([
                "--model",
                "fixture-model",
                "--base-url",
                "http://127.0.0.1:9/v1",
            ])
            .arg("--workspace")
            .arg(workspace)
            .arg("--sessions-dir")
            .arg(sessions)
            .args(flags)
            .envs(env.iter().copied())
            .env_remove("OPENAI_API_KEY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
            next_id: 0,
        }
    }

    /// Sends a spawn and waits for its response.
    pub(super) fn spawn(&mut self, params: &Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({"id": id, "method": "spawn", "params": params}).to_string();
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        loop {
            let message = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|e| panic!("no response to {line}: {e}"));
            if message["id"] == id {
                return message;
            }
        }
    }

    /// Closes stdin and waits for the server's exit.
    pub(super) fn stop(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "serve --stdio exited {status}");
    }
}

/// The session header of the first child in a result object.
fn header_of(result: &Value) -> Value {
    let file = result["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap_or_else(|| panic!("no session file in {result:#}"));
    let lines = check_session_file(Path::new(file));
    assert_reaped(&lines);
    lines[0].clone()
}

/// The header's limits, budget and tools are at most [`SERVER_FLAGS`].
fn assert_within_server_flags(header: &Value, tools: &[&str]) {
    let limits = &header["limits"];
    for (field, ceiling) in [
        ("memoryBytes", 256u64 << 20),
        ("pids", 64),
        ("wallTimeoutMs", 60_000),
        ("idleTimeoutMs", 30_000),
        ("toolMemoryBytes", 128 << 20),
        ("toolTimeoutMs", 20_000),
        ("returnedTextBytes", 64 << 10),
    ] {
        let value = limits[field].as_u64().unwrap();
        assert!(value <= ceiling, "{field} {value} > {ceiling}: {header}");
    }
    assert!(header["maxTurns"].as_u64().unwrap() <= 5, "{header}");
    assert!(header["maxCost"].as_f64().unwrap() <= 0.01, "{header}");
    assert!(header["depth"].as_u64().unwrap() <= 1, "{header}");
    for tool in header["tools"].as_array().unwrap() {
        assert!(
            tools.contains(&tool.as_str().unwrap()),
            "tool {tool} is not the server's: {header}"
        );
    }
}

#[test]
fn serve_stdio_refuses_every_ask_above_the_servers_flags_and_runs_lower_asks_under_them() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(workspace.join("sub")).unwrap();
    let sessions = dir.path().join("sessions");
    let mut server = StdioServer::start(&workspace, &sessions, &SERVER_FLAGS);

    for (ask, fragments) in asks_above(elsewhere.path()) {
        let mut params = json!({"task": "fixture:success"});
        params
            .as_object_mut()
            .unwrap()
            .extend(ask.as_object().unwrap().clone());
        let response = server.spawn(&params);
        assert_eq!(
            response["error"]["code"], "INVALID_INPUT",
            "{ask}: {response}"
        );
        let message = response["error"]["message"].as_str().unwrap();
        for fragment in &fragments {
            assert!(
                message.contains(fragment.as_str()),
                "{ask}: `{fragment}` not in {message}"
            );
        }
    }
    // Nothing was started for any of them.
    assert_eq!(session_files(&sessions), Vec::<PathBuf>::new());

    // Lower asks (and a directory below the workspace) are run, under them.
    let response = server.spawn(&json!({
        "task": "fixture:echo-spec",
        "agent": "implementer",
        "workspace": "sub",
        "limits": {"memory": "128M", "maxTurns": 3, "maxCost": 0.005},
        "tools": ["bash_read"],
        "isolation": "overlay",
        "apply": "never",
    }));
    let result = &response["result"]["result"];
    assert_eq!(result["details"]["error"], Value::Null, "{response}");
    let header = header_of(result);
    assert_eq!(header["limits"]["memoryBytes"], 128u64 << 20);
    assert_eq!(header["maxTurns"], 3);
    assert_eq!(header["tools"], json!(["bash_read"]));
    assert_within_server_flags(&header, &["bash_read", "bash_find"]);
    assert_eq!(
        PathBuf::from(header["cwd"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        workspace.join("sub").canonicalize().unwrap()
    );
    server.stop();
    assert_nothing_runs_in(&workspace);
}

/// Every `*.jsonl` under `dir` but the server's own (under `serve/`).
pub(super) fn session_files(dir: &Path) -> Vec<PathBuf> {
    jsonl_files(dir)
        .into_iter()
        .filter(|file| {
            !file
                .strip_prefix(dir)
                .is_ok_and(|inner| inner.components().any(|c| c.as_os_str() == "serve"))
        })
        .collect()
}

/// The Python MCP client: calls `subagent` once per argument object of
/// argv[2] (JSON) on the server started as argv[1] argv[3:], and prints
/// what each returned. The server gets this process's environment (the
/// stdio client passes only a few variables by default).
pub(super) const MCP_CLIENT: &str = r#"
import json, os, sys
import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

async def main():
    command, calls, args = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    out = []
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            for arguments in calls:
                result = await session.call_tool("subagent", arguments)
                out.append({
                    "isError": bool(result.is_error),
                    "texts": [c.text for c in result.content if getattr(c, "type", "") == "text"],
                })
    print(json.dumps(out))

anyio.run(main)
"#;

#[test]
fn mcp_subagent_calls_above_the_servers_flags_are_refused_and_an_agents_extra_tools_dropped() {
    let Some(python) = super::serve_mcp::mcp_python("mcp_ceilings") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(&workspace).unwrap();
    let script = dir.path().join("client.py");
    std::fs::write(&script, MCP_CLIENT).unwrap();
    // No --tools: the server's tools are its agent's (general: the file
    // tools and python_execute).
    let flags = [
        "--memory",
        "256M",
        "--timeout",
        "60s",
        "--max-cost",
        "0.01",
        "--tool-memory",
        "128M",
        "--max-depth",
        "1",
    ];
    // The issue's attack, one limit at a time, then tools, network, a
    // workspace; last an agent whose own list has web tools the server lacks.
    let calls = json!([
        {"task": "fixture:success", "limits": {"memory": "20G"}},
        {"task": "fixture:success", "limits": {"timeout": "48h"}},
        {"task": "fixture:success", "limits": {"maxCost": 5000}},
        {"task": "fixture:success", "limits": {"toolMemory": "20G"}},
        {"task": "fixture:success", "limits": {"maxDepth": 9}},
        {"task": "fixture:success", "limits": {"pids": 100000}},
        {"task": "fixture:success", "limits": {"idleTimeout": "48h"}},
        {"task": "fixture:success", "limits": {"toolTimeout": "48h"}},
        {"task": "fixture:success", "limits": {"toolPids": 100000}},
        {"task": "fixture:success", "limits": {"toolDisk": "20G"}},
        {"task": "fixture:success", "limits": {"maxTurns": 100000}},
        {"task": "fixture:success", "limits": {"returnLimit": "20G"}},
        {"task": "fixture:success", "tools": ["search_web"]},
        {"task": "fixture:success", "allowNetwork": true},
        {"task": "fixture:success", "workspace": "/"},
        {"task": "fixture:echo-spec", "agent": "researcher", "limits": {"memory": "200M"}},
    ]);
    let expected = [
        "limits.memory = 20G is above the server's ceiling of 256M",
        "limits.timeout = 48h is above the server's ceiling of 1m",
        "limits.maxCost = 5000 is above the server's ceiling of 0.01",
        "limits.toolMemory = 20G is above the server's ceiling of 128M",
        "limits.maxDepth = 9 is above the server's ceiling of 1",
        "limits.pids = 100000 is above the server's ceiling of",
        "limits.idleTimeout = 48h is above the server's ceiling of",
        "limits.toolTimeout = 48h is above the server's ceiling of",
        "limits.toolPids = 100000 is above the server's ceiling of",
        "limits.toolDisk = 20G is above the server's ceiling of",
        "limits.maxTurns = 100000 is above the server's ceiling of",
        "limits.returnLimit = 20G is above the server's ceiling of",
        "tools `search_web` are not among the server's tools",
        "network is off",
        "outside the server's workspace",
    ];
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
        .arg("--workspace")
        .arg(&workspace)
        .arg("--sessions-dir")
        .arg(&sessions)
        .args(flags)
        .env_remove("OPENAI_API_KEY")
        .current_dir(&workspace)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report.len(), expected.len() + 1);
    for (result, fragment) in report.iter().zip(expected) {
        assert_eq!(result["isError"], true, "{fragment}: {result}");
        let text = result["texts"][0].as_str().unwrap();
        assert!(text.starts_with("INVALID_INPUT: "), "{text}");
        assert!(text.contains(fragment), "`{fragment}` not in {text}");
    }
    let accepted = &report[expected.len()];
    assert_eq!(accepted["isError"], false, "{accepted}");
    let spec: Value = serde_json::from_str(accepted["texts"][0].as_str().unwrap()).unwrap();
    let general = [
        "bash",
        "bash_find",
        "bash_read",
        "bash_ripgrep",
        "edit_file",
        "list_dir",
        "multi_edit",
        "python_execute",
        "write_file",
    ];
    let tools: Vec<&str> = spec["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(!tools.is_empty(), "{spec}");
    for tool in &tools {
        assert!(general.contains(tool), "researcher kept {tool}: {spec}");
    }
    // One child ran, and its header is under the flags.
    let files = session_files(&sessions);
    assert_eq!(files.len(), 1, "{files:?}");
    let header = &check_session_file(&files[0])[0];
    assert_eq!(header["limits"]["memoryBytes"], 200u64 << 20);
    assert!(header["limits"]["wallTimeoutMs"].as_u64().unwrap() <= 60_000);
    assert!(header["limits"]["toolMemoryBytes"].as_u64().unwrap() <= 128 << 20);
    assert!(header["maxCost"].as_f64().unwrap() <= 0.01);
    assert_nothing_runs_in(&workspace);
}
