//! `subagent call [--sse]` through the real binary, the real worker and the
//! scripted model: the seed's stdin JSON in; SSE frames read by a Python
//! parser that keeps only `output_text` as the seed's call_subagent tool
//! does (a text answer after a tool call and its result; one
//! `output_structured` frame for a schema), the plain answer then the DONE
//! marker, `Error: <message>` for bad stdin and an unknown tool (exit 0
//! with `--exit-zero`), and SIGINT
//! mid-answer (exit 130, `Error:` then `response_end`, an aborted session);
//! the real llama-server when it is installed. No process of a run
//! survives it.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::scripted_model::{ScriptedModel, offered_tools, text_turn, tool_call_turn};
use super::support::*;

const PARSER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/suite/call_sse_parser.py"
);

/// The seed's request for the scripted model, `prompt` and `tools` filled in.
fn request(model: &ScriptedModel, prompt: &str, tools: &[&str]) -> Value {
    json!({
        "model": "scripted",
        "provider": "openai-chat",
        "url": model.base_url(),
        "api_key_name": "OPENAI_API_KEY",
        "prompt": prompt,
        "system_prompt": "You answer from the workspace.",
        "tool_subset": tools,
        "think": false,
        "temperature": 0.8,
        "max_tokens": 512,
    })
}

/// A fresh workspace holding `notes.txt`.
fn workspace() -> tempfile::TempDir {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("notes.txt"), "needle on line one\n").unwrap();
    workspace
}

/// `subagent call` (`--sse` when asked) started in `workspace` with `stdin`
/// written and closed.
fn spawn_call(stdin: &str, sse: bool, workspace: &Path, sessions: &Path) -> Child {
    let mut cmd = Command::new(binary("subagent"));
    cmd.arg("call");
    if sse {
        cmd.arg("--sse");
    }
    cmd.arg("--workspace")
        .arg(workspace)
        .arg("--sessions-dir")
        .arg(sessions)
        .args(["--timeout", "60"])
        .env("OPENAI_API_KEY", TEST_API_KEY)
        .env_remove("SUBAGENT_WORKER");
    spawn_with_stdin(&mut cmd, stdin.as_bytes())
}

/// `subagent call` run to its end in a fresh workspace; asserts that
/// nothing runs in the workspace after.
fn call(stdin: &str, sse: bool, sessions: &Path) -> Output {
    let workspace = workspace();
    let out = spawn_call(stdin, sse, workspace.path(), sessions)
        .wait_with_output()
        .unwrap();
    assert_nothing_runs_in(workspace.path());
    out
}

/// The SSE output as the seed's parser reads it.
fn parse_sse(stdout: &[u8]) -> Value {
    let mut parser = Command::new("python3")
        .arg(PARSER)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    parser.stdin.take().unwrap().write_all(stdout).unwrap();
    let out = parser.wait_with_output().unwrap();
    assert!(out.status.success(), "the parser refused the stream");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The session file named on stderr: valid, ended, its worker reaped.
fn checked_session(out: &Output) -> Vec<Value> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let file = stderr
        .lines()
        .find_map(|l| l.strip_prefix("subagent: session file: "))
        .unwrap_or_else(|| panic!("no session file on stderr: {stderr}"));
    let lines = check_session_file(Path::new(file));
    assert_reaped(&lines);
    lines
}

fn events(parsed: &Value) -> Vec<&str> {
    parsed["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect()
}

#[test]
fn call_sse_streams_a_tool_call_its_result_and_the_answer_the_parser_keeps() {
    let answer = "The needle is on line one of notes.txt.";
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_1", "bash_read", &json!({"path": "notes.txt"})),
        text_turn(answer),
    ]);
    let sessions = tempfile::tempdir().unwrap();
    let stdin = request(&model, "Where is the needle?", &["bash_read"]).to_string();
    let out = call(&stdin, true, sessions.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");

    let parsed = parse_sse(&out.stdout);
    assert_eq!(parsed["text"], answer);
    let events = events(&parsed);
    let first_text = events.iter().position(|e| *e == "output_text").unwrap();
    assert_eq!(
        events[..first_text],
        ["tool_call", "tool_result", "block_end"],
        "{events:?}"
    );
    assert_eq!(events[events.len() - 2..], ["block_end", "response_end"]);
    assert!(
        events[first_text..events.len() - 2]
            .iter()
            .all(|e| *e == "output_text"),
        "{events:?}"
    );
    let frames = parsed["frames"].as_array().unwrap();
    assert_eq!(frames[0]["id"], "call_1");
    let call: Value = serde_json::from_str(frames[0]["delta"].as_str().unwrap()).unwrap();
    assert_eq!(call["name"], "bash_read");
    assert_eq!(
        frames[1]["delta"]
            .as_str()
            .map(|d| d.contains("needle on line one")),
        Some(true)
    );

    // The JSON's settings reached the model.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(offered_tools(&requests[0]), ["bash_read"]);
    assert_eq!(requests[0]["temperature"], 0.8);
    assert_eq!(requests[0]["max_tokens"], 512);
    assert_eq!(
        requests[0]["messages"][0]["content"],
        "You answer from the workspace."
    );
    let lines = checked_session(&out);
    assert!(
        lines.iter().any(|l| l["type"] == "tool_result"),
        "no tool result in the session"
    );
}

#[test]
fn call_sse_sends_a_structured_answer_as_one_output_structured_frame() {
    let capital = json!({"capital": "Paris", "country": "France"});
    let model = ScriptedModel::start(vec![tool_call_turn("call_1", "report_back", &capital)]);
    let sessions = tempfile::tempdir().unwrap();
    let mut stdin = request(&model, "Capital of France?", &[]);
    stdin["output_schema"] = json!({
        "type": "object",
        "properties": {"capital": {"type": "string"}, "country": {"type": "string"}},
        "required": ["capital", "country"],
    });
    let out = call(&stdin.to_string(), true, sessions.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let parsed = parse_sse(&out.stdout);
    let events = events(&parsed);
    assert_eq!(
        events.iter().filter(|e| **e == "output_structured").count(),
        1,
        "{events:?}"
    );
    assert_eq!(events.last(), Some(&"response_end"));
    let frame = parsed["frames"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["type"] == "output_structured")
        .unwrap();
    assert_eq!(frame["id"], "");
    let structured: Value = serde_json::from_str(frame["delta"].as_str().unwrap()).unwrap();
    assert_eq!(structured, capital);
    checked_session(&out);
}

#[test]
fn call_without_sse_prints_the_answer_then_the_done_marker() {
    let model = ScriptedModel::start(vec![text_turn("Paris is the capital of France.")]);
    let sessions = tempfile::tempdir().unwrap();
    let out = call(
        &request(&model, "Capital of France?", &[]).to_string(),
        false,
        sessions.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Paris is the capital of France.\n\n=== [ DONE ] ===\n"
    );
    checked_session(&out);

    let capital = json!({"capital": "Paris", "country": "France"});
    let model = ScriptedModel::start(vec![tool_call_turn("call_1", "report_back", &capital)]);
    let mut stdin = request(&model, "Capital of France?", &[]);
    stdin["output_schema"] = json!({"type": "object", "required": ["capital"]});
    let out = call(&stdin.to_string(), false, sessions.path());
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let (json_line, rest) = stdout.split_once('\n').unwrap();
    assert_eq!(serde_json::from_str::<Value>(json_line).unwrap(), capital);
    assert_eq!(rest, "\n=== [ DONE ] ===\n");
}

#[test]
fn bad_stdin_and_an_unknown_tool_print_error_and_ask_no_model() {
    let model = ScriptedModel::start(vec![text_turn("never sent")]);
    let sessions = tempfile::tempdir().unwrap();

    let out = call("{not json", false, sessions.path());
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("Error: stdin is not a call request"),
        "{stdout}"
    );

    let out = call(
        "{\"prompt\": \"x\", \"promt\": \"y\"}",
        true,
        sessions.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    let parsed = parse_sse(&out.stdout);
    let text = parsed["text"].as_str().unwrap();
    assert!(
        text.starts_with("Error: ") && text.contains("promt"),
        "{text}"
    );
    assert_eq!(events(&parsed), ["output_text", "response_end"]);

    let stdin = request(&model, "Search", &["bash_read", "no_such_tool"]).to_string();
    let out = call(&stdin, false, sessions.path());
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("Error: INVALID_INPUT: ") && stdout.contains("no_such_tool"),
        "{stdout}"
    );
    assert!(
        model.requests().is_empty(),
        "a refused call asked the model"
    );
}

#[test]
fn call_sse_against_the_real_model_streams_text_the_parser_reassembles() {
    let Some(server) = super::llama::LlamaServer::start_or_skip("call_sse_real_model") else {
        return;
    };
    let sessions = tempfile::tempdir().unwrap();
    let stdin = json!({
        "model": "smollm2",
        "provider": "openai-chat",
        "url": server.base_url(),
        "api_key_name": null,
        "prompt": "Name one colour.",
        "system_prompt": null,
        "tool_subset": [],
        "think": false,
        "temperature": 0.0,
        "max_tokens": 32,
    });
    let out = call(&stdin.to_string(), true, sessions.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let parsed = parse_sse(&out.stdout);
    let events = events(&parsed);
    assert!(events.contains(&"output_text"), "{events:?}");
    assert_eq!(events[events.len() - 2..], ["block_end", "response_end"]);
    // The streamed deltas are the answer the session file recorded.
    let lines = checked_session(&out);
    let recorded: String = lines
        .iter()
        .filter(|l| l["type"] == "message" && l["role"] == "assistant")
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    let text = parsed["text"].as_str().unwrap();
    assert!(!text.trim().is_empty(), "no text streamed");
    assert_eq!(text, recorded);
}

#[test]
fn sigint_while_the_model_answers_ends_the_call_with_error_and_response_end() {
    let model = ScriptedModel::start_held(vec![text_turn("never sent")]);
    let sessions = tempfile::tempdir().unwrap();
    let workspace = workspace();
    let stdin = request(&model, "Take your time.", &[]).to_string();
    let child = spawn_call(&stdin, true, workspace.path(), sessions.path());
    assert!(
        model.wait_for_requests(1, Duration::from_secs(30)),
        "the child never asked the model"
    );
    // SAFETY: a plain kill(2) of a process this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_nothing_runs_in(workspace.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "stderr: {stderr}");
    let parsed = parse_sse(&out.stdout);
    let text = parsed["text"].as_str().unwrap();
    assert!(text.starts_with("Error: "), "{text}");
    assert_eq!(events(&parsed).last(), Some(&"response_end"));
    let lines = checked_session(&out);
    assert_eq!(lines.last().unwrap()["eventType"], "subagent:aborted");
}

#[test]
fn exit_zero_writes_the_plain_error_and_exits_0() {
    let model = ScriptedModel::start(vec![text_turn("never sent")]);
    let sessions = tempfile::tempdir().unwrap();
    let workspace = workspace();
    let stdin = request(&model, "Search", &["no_such_tool"]).to_string();
    let out = spawn_with_stdin(
        Command::new(binary("subagent"))
            .args(["call", "--exit-zero", "--workspace"])
            .arg(workspace.path())
            .arg("--sessions-dir")
            .arg(sessions.path())
            .env("OPENAI_API_KEY", TEST_API_KEY)
            .env_remove("SUBAGENT_WORKER"),
        stdin.as_bytes(),
    )
    .wait_with_output()
    .unwrap();
    assert_nothing_runs_in(workspace.path());
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("Error: INVALID_INPUT: ") && stdout.contains("no_such_tool"),
        "{stdout}"
    );
    assert!(!stdout.contains("=== [ DONE ] ==="), "{stdout}");
    assert!(model.requests().is_empty());
}
