//! Trace context from each way in: a `serve --stdio` spawn's
//! `traceparent` field, a `serve --mcp` call's `_meta.traceparent`, and a
//! batch, whose tasks' runs are spans of one batch span. Exported as
//! http/json to the loopback receiver of [`super::telemetry`].

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use super::scripted_model::{ScriptedModel, text_turn};
use super::support::*;
use super::telemetry::{CALLER_SPAN, CALLER_TRACE, Capture, caller_traceparent};

/// `subagent serve MODE` against `model`, exporting http/json to
/// `capture`: sends `lines` on stdin, reads stdout until the answer to
/// request id `answer_id`, then closes stdin and waits for the server.
fn serve_once(
    mode: &str,
    model: &ScriptedModel,
    capture: &Capture,
    lines: &[Value],
    answer_id: i64,
) -> Value {
    use std::io::BufRead;
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let mut child = Command::new(binary("subagent"))
        .args([
            "serve",
            mode,
            "--provider",
            "openai-chat",
            "--model",
            "scripted",
        ])
        .arg("--base-url")
        .arg(model.base_url())
        .arg("--workspace")
        .arg(workspace.path())
        .arg("--sessions-dir")
        .arg(sessions.path())
        .env_remove("SUBAGENT_WORKER")
        .envs(capture.export_env())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    let mut answer = Value::Null;
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let line: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if line["id"] == answer_id {
            answer = line;
            break;
        }
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    assert_nothing_runs_in(workspace.path());
    answer
}

/// The parent span id of each `invoke_agent` span `capture` received.
fn root_parents(capture: &Capture) -> Vec<Value> {
    let mut parents = Vec::new();
    for (_, body) in &capture.seen() {
        let body: Value = serde_json::from_slice(body).unwrap();
        for rs in body["resourceSpans"].as_array().unwrap() {
            for ss in rs["scopeSpans"].as_array().unwrap() {
                for span in ss["spans"].as_array().unwrap() {
                    if span["name"].as_str().unwrap().starts_with("invoke_agent") {
                        assert_eq!(span["traceId"], CALLER_TRACE);
                        parents.push(span["parentSpanId"].clone());
                    }
                }
            }
        }
    }
    parents
}

#[test]
fn a_stdio_spawns_traceparent_field_makes_its_run_a_child_of_the_callers_span() {
    let capture = Capture::start();
    let model = ScriptedModel::start(vec![text_turn("done")]);
    let answer = serve_once(
        "--stdio",
        &model,
        &capture,
        &[json!({"id": 1, "method": "spawn", "params": {
            "task": "Say done.",
            "traceparent": caller_traceparent(),
        }})],
        1,
    );
    assert!(answer["error"].is_null(), "{answer:#}");
    assert_eq!(root_parents(&capture), [json!(CALLER_SPAN)]);
}

#[test]
fn an_mcp_calls_meta_traceparent_makes_its_run_a_child_of_the_callers_span() {
    let capture = Capture::start();
    let model = ScriptedModel::start(vec![text_turn("done")]);
    let answer = serve_once(
        "--mcp",
        &model,
        &capture,
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "telemetry-test", "version": "1"},
            }}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "subagent",
                "arguments": {"task": "Say done."},
                "_meta": {"traceparent": caller_traceparent()},
            }}),
        ],
        2,
    );
    assert_eq!(answer["result"]["isError"], false, "{answer:#}");
    assert_eq!(root_parents(&capture), [json!(CALLER_SPAN)]);
}

#[test]
fn a_batchs_tasks_are_spans_of_one_batch_span_under_the_callers_span() {
    let capture = Capture::start();
    let model = ScriptedModel::start(vec![text_turn("one"), text_turn("two")]);
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    std::fs::create_dir(&workspace).unwrap();
    let tasks = dir.path().join("tasks.jsonl");
    std::fs::write(
        &tasks,
        "{\"id\":\"a\",\"task\":\"Say one.\"}\n{\"id\":\"b\",\"task\":\"Say two.\"}\n",
    )
    .unwrap();
    let out = Command::new(binary("subagent"))
        .arg("batch")
        .arg(&tasks)
        .arg("--results")
        .arg(dir.path().join("results.jsonl"))
        .arg("--sessions-dir")
        .arg(dir.path().join("sessions"))
        .arg("--workspace")
        .arg(&workspace)
        .args([
            "--provider",
            "openai-chat",
            "--model",
            "scripted",
            "--tools",
            "none",
        ])
        .arg("--base-url")
        .arg(model.base_url())
        .env_remove("SUBAGENT_WORKER")
        .envs(capture.export_env())
        .env("TRACEPARENT", caller_traceparent())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_nothing_runs_in(&workspace);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut batch_span = None;
    let mut parents = Vec::new();
    for (_, body) in &capture.seen() {
        let body: Value = serde_json::from_slice(body).unwrap();
        for rs in body["resourceSpans"].as_array().unwrap() {
            for ss in rs["scopeSpans"].as_array().unwrap() {
                for span in ss["spans"].as_array().unwrap() {
                    assert_eq!(span["traceId"], CALLER_TRACE);
                    match span["name"].as_str().unwrap() {
                        "batch" => batch_span = Some(span.clone()),
                        "invoke_agent general" => parents.push(span["parentSpanId"].clone()),
                        _ => {}
                    }
                }
            }
        }
    }
    let batch_span = batch_span.expect("a batch span");
    assert_eq!(batch_span["parentSpanId"], CALLER_SPAN);
    assert_eq!(
        parents,
        [batch_span["spanId"].clone(), batch_span["spanId"].clone()]
    );
}
