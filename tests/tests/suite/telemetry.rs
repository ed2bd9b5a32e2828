//! OpenTelemetry traces end to end: the real `subagent` CLI exporting to a
//! real OTLP receiver nobody here wrote (Arize Phoenix, installed from PyPI
//! into the cache like the other cached installs), queried through its REST
//! API. Phoenix takes OTLP/HTTP protobuf only (it answers http/json with
//! 415): http/json reaches it through a real collector in
//! `telemetry_json.rs`, and its bytes on the wire (JSON, the headers) are
//! checked here against a loopback receiver that keeps what it is sent.
//! A dead collector (a closed port) and an invalid `TRACEPARENT` must each
//! cost one warning, never the run.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use subagent_test_support::http::{LoopbackHttp, Response};

use super::cached_installs::python_venv;
use super::scripted_model::{
    ScriptedModel, TEXT_RESPONSE_ID, text_turn, tool_call_response_id, tool_call_turn,
};
use super::support::*;

const PHOENIX: &str = "arize-phoenix==20.26.1";
pub(super) const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
pub(super) const CALLER_SPAN: &str = "00f067aa0ba902b7";

pub(super) fn caller_traceparent() -> String {
    format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01")
}

pub(super) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET path` on 127.0.0.1:`port` (HTTP/1.0, so the body is not chunked):
/// status and body; `None` when nothing listens yet.
pub(super) fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).ok()?;
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, body.to_owned()))
}

/// A Phoenix server on free loopback ports, in a directory of its own;
/// killed and reaped on drop.
pub(super) struct Phoenix {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Phoenix {
    pub(super) fn start(test: &str) -> Option<Self> {
        let venv = python_venv(test, "arize-phoenix-20.26.1", &[PHOENIX])?;
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let child = Command::new(venv.join("bin/python"))
            .args(["-m", "phoenix.server.main", "serve"])
            .current_dir(dir.path())
            .env("PHOENIX_WORKING_DIR", dir.path())
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", free_port().to_string())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("phoenix.log")).unwrap())
            .spawn()
            .unwrap();
        let mut phoenix = Self { child, port, dir };
        // Phoenix migrates its database before it listens: up to a minute
        // on a slow machine. Waits for its health endpoint to answer.
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if matches!(http_get(port, "/healthz"), Some((200, _))) {
                return Some(phoenix);
            }
            if let Ok(Some(status)) = phoenix.child.try_wait() {
                panic!("Phoenix exited ({status}): {}", phoenix.log());
            }
            assert!(
                Instant::now() < deadline,
                "Phoenix never answered: {}",
                phoenix.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("phoenix.log")).unwrap_or_default()
    }

    pub(super) fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The spans of the default project, once at least `n` are stored.
    pub(super) fn spans(&self, n: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some((200, body)) = http_get(self.port, "/v1/projects/default/spans?limit=1000")
            {
                let spans = serde_json::from_str::<Value>(&body).unwrap()["data"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                if spans.len() >= n {
                    return spans;
                }
                assert!(
                    Instant::now() < deadline,
                    "only {} spans stored: {spans:#?}",
                    spans.len()
                );
            } else {
                assert!(Instant::now() < deadline, "no span list: {}", self.log());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    pub(super) fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        assert_nothing_runs_in(self.dir.path());
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An attribute of a Phoenix span, flat (`a.b.c`) or nested as Phoenix
/// may store dotted names.
pub(super) fn attr<'a>(span: &'a Value, name: &str) -> &'a Value {
    let attributes = &span["attributes"];
    if !attributes[name].is_null() {
        return &attributes[name];
    }
    name.split('.').fold(attributes, |v, key| &v[key])
}

pub(super) fn named<'a>(spans: &'a [Value], name: &str) -> Vec<&'a Value> {
    spans.iter().filter(|s| s["name"] == name).collect()
}

/// The root calls `subagent` (its grandchild answers), then `bash_find`,
/// then answers.
pub(super) fn nested_script() -> Vec<Vec<u8>> {
    vec![
        tool_call_turn(
            "call_sub",
            "subagent",
            &json!({"agent": "general", "task": "Count the files.", "maxTurns": 3}),
        ),
        text_turn("Grandchild: there are 3 files."),
        tool_call_turn("call_find", "bash_find", &json!({"pattern": "*"})),
        text_turn("Root: done."),
    ]
}

/// [`nested_script`] run by the CLI with the caller's `TRACEPARENT` and
/// `env`, which must cost no warning: its result, and the sessions dir
/// its files are in (deleted when dropped).
pub(super) fn traced_nested_run(env: &[(&str, &str)]) -> (Value, tempfile::TempDir) {
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("a.txt"), "a").unwrap();
    let model = ScriptedModel::start(nested_script());
    let traceparent = caller_traceparent();
    let mut env = env.to_vec();
    env.push(("TRACEPARENT", &traceparent));
    let out = run_nested(&model, workspace.path(), sessions.path(), &env);
    assert_nothing_runs_in(workspace.path());
    let result = result_of(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("WARN"), "no warning expected: {stderr}");
    (result, sessions)
}

pub(super) fn run_nested(
    model: &ScriptedModel,
    workspace: &Path,
    sessions: &Path,
    env: &[(&str, &str)],
) -> Output {
    let mut c = model.run_command(workspace, sessions);
    c.args([
        "--json",
        "--quiet",
        "--task",
        "Delegate the counting.",
        "--max-depth",
        "2",
        "--tools",
        "subagent,bash_find",
    ]);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

pub(super) fn result_of(out: &Output) -> Value {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_valid_result(&json);
    json
}

#[test]
fn a_nested_run_started_with_traceparent_is_one_trace_under_the_callers_span_in_phoenix() {
    let test =
        "a_nested_run_started_with_traceparent_is_one_trace_under_the_callers_span_in_phoenix";
    let Some(phoenix) = Phoenix::start(test) else {
        return;
    };
    let endpoint = phoenix.endpoint();
    let (result, _sessions) = traced_nested_run(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
        ("OTEL_SERVICE_NAME", "subagent-test"),
    ]);
    let run_id = result["details"]["runId"].as_str().unwrap().to_owned();
    // The session file keeps each turn's response id on its message line.
    let file = result["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap();
    let recorded: Vec<Value> = check_session_file(Path::new(file))
        .into_iter()
        .filter(|l| l["type"] == "message" && l["role"] == "assistant")
        .map(|l| l["responseId"].clone())
        .collect();
    assert_eq!(
        recorded,
        [
            json!(tool_call_response_id("call_sub")),
            json!(tool_call_response_id("call_find")),
            json!(TEXT_RESPONSE_ID),
        ]
    );

    assert_nested_trace(&phoenix, &run_id);
    phoenix.stop();
}

/// The trace of [`nested_script`] run by [`run_nested`] with the caller's
/// `TRACEPARENT`, as Phoenix stored it: one trace under the caller's span,
/// the span tree and the attributes of the issue, each turn's response id.
pub(super) fn assert_nested_trace(phoenix: &Phoenix, run_id: &str) {
    // 2 runs, 4 model turns (3 of the root, 1 of the grandchild), 2 tool calls.
    let spans = phoenix.spans(8);
    assert_eq!(spans.len(), 8, "{spans:#?}");
    for span in &spans {
        assert_eq!(
            span["context"]["trace_id"], CALLER_TRACE,
            "one trace: {span:#}"
        );
    }
    let agents = named(&spans, "invoke_agent general");
    assert_eq!(agents.len(), 2, "{spans:#?}");
    let root = agents
        .iter()
        .find(|s| attr(s, "subagent.run_id") == run_id)
        .expect("the root run's span");
    let grandchild = agents
        .iter()
        .find(|s| s["context"]["span_id"] != root["context"]["span_id"])
        .unwrap();
    assert_eq!(
        root["parent_id"], CALLER_SPAN,
        "the root's parent is the caller's span"
    );
    assert_eq!(attr(root, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(attr(root, "gen_ai.agent.name"), "general");
    assert_eq!(attr(root, "gen_ai.request.model"), "scripted");
    assert_eq!(attr(root, "gen_ai.provider.name"), "openai");
    assert_eq!(attr(root, "subagent.status"), "ok");
    assert!(
        attr(root, "subagent.task").is_null(),
        "no content unless opted in: {root:#}"
    );

    let tools = |name: &str| named(&spans, &format!("execute_tool {name}"));
    let (sub, find) = (tools("subagent"), tools("bash_find"));
    assert_eq!((sub.len(), find.len()), (1, 1), "{spans:#?}");
    for (span, call_id, tool) in [
        (sub[0], "call_sub", "subagent"),
        (find[0], "call_find", "bash_find"),
    ] {
        assert_eq!(span["parent_id"], root["context"]["span_id"]);
        assert_eq!(attr(span, "gen_ai.operation.name"), "execute_tool");
        assert_eq!(attr(span, "gen_ai.tool.name"), tool);
        assert_eq!(attr(span, "gen_ai.tool.call.id"), call_id);
        assert_eq!(attr(span, "subagent.tool.outcome"), "ok");
        assert!(
            attr(span, "subagent.tool.duration_ms").is_number(),
            "{span:#}"
        );
    }
    // The nested child is a child of the tool call that started it.
    assert_eq!(grandchild["parent_id"], sub[0]["context"]["span_id"]);

    let chats = named(&spans, "chat scripted");
    assert_eq!(chats.len(), 4, "{spans:#?}");
    let under = |parent: &Value| {
        chats
            .iter()
            .filter(|c| c["parent_id"] == parent["context"]["span_id"])
            .count()
    };
    assert_eq!((under(root), under(grandchild)), (3, 1));
    for chat in &chats {
        assert_eq!(attr(chat, "gen_ai.operation.name"), "chat");
        assert!(
            attr(chat, "gen_ai.usage.input_tokens").is_number(),
            "{chat:#}"
        );
        assert!(
            attr(chat, "gen_ai.usage.output_tokens").is_number(),
            "{chat:#}"
        );
        assert!(
            !attr(chat, "gen_ai.response.finish_reasons").is_null(),
            "{chat:#}"
        );
    }
    // Each turn's span carries the id the model's stream gave that turn.
    let mut ids: Vec<String> = chats
        .iter()
        .map(|c| {
            attr(c, "gen_ai.response.id")
                .as_str()
                .unwrap_or("none")
                .to_owned()
        })
        .collect();
    ids.sort();
    let mut sent = vec![
        tool_call_response_id("call_find"),
        tool_call_response_id("call_sub"),
        TEXT_RESPONSE_ID.to_owned(),
        TEXT_RESPONSE_ID.to_owned(),
    ];
    sent.sort();
    assert_eq!(ids, sent, "{chats:#?}");
}

/// A request's head (lowercased: request line and headers) and body.
pub(super) type Received = (String, Vec<u8>);

/// A loopback OTLP receiver (the test support's stub): answers 200 to
/// every request and keeps each one.
pub(super) struct Capture {
    server: LoopbackHttp,
}

impl Capture {
    pub(super) fn start() -> Self {
        Self {
            server: LoopbackHttp::start(|_| Response::json(200, "{}")),
        }
    }

    /// The variables that export a run's spans here as http/json.
    pub(super) fn export_env(&self) -> [(&'static str, String); 2] {
        [
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                self.server.url("/v1/traces"),
            ),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json".to_owned()),
        ]
    }

    /// Every request so far.
    pub(super) fn seen(&self) -> Vec<Received> {
        self.server
            .requests()
            .into_iter()
            .map(|r| {
                let mut head = format!("{} {}", r.method, r.target);
                for (name, value) in &r.headers {
                    head.push_str(&format!("\r\n{name}: {value}"));
                }
                (head.to_lowercase(), r.body)
            })
            .collect()
    }
}

#[test]
fn http_json_carries_the_spans_and_headers_to_the_collector_and_nothing_of_otel_reaches_tools() {
    let capture = Capture::start();
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let code = "import os\nprint(sorted(k for k in os.environ if 'OTEL' in k or 'TRACE' in k or 'otel' in os.environ[k]))";
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_env", "python_execute", &json!({"code": code})),
        text_turn("done"),
    ]);
    let out = model
        .run_command(workspace.path(), sessions.path())
        .args([
            "--json",
            "--quiet",
            "--task",
            "Look around.",
            "--tools",
            "python_execute",
        ])
        .envs(capture.export_env())
        .env("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=otel-secret-key")
        .env("TRACEPARENT", caller_traceparent())
        .env("TRACESTATE", "vendor=otel")
        .output()
        .unwrap();
    assert_nothing_runs_in(workspace.path());
    let result = result_of(&out);
    // The tool saw no telemetry variable: its environment is an allowlist.
    let file = result["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap();
    let tool_output = check_session_file(Path::new(file))
        .into_iter()
        .find(|l| l["type"] == "tool_result")
        .expect("a tool result")["output"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        tool_output.contains("[]"),
        "telemetry variables reached the tool: {tool_output}"
    );

    let seen = capture.seen();
    assert!(!seen.is_empty(), "nothing exported");
    let mut names = Vec::new();
    let mut root_parent = None;
    for (head, body) in &seen {
        assert!(head.starts_with("post /v1/traces"), "{head}");
        assert!(head.contains("content-type: application/json"), "{head}");
        assert!(head.contains("x-api-key: otel-secret-key"), "{head}");
        let body: Value = serde_json::from_slice(body).unwrap();
        for rs in body["resourceSpans"].as_array().unwrap() {
            for ss in rs["scopeSpans"].as_array().unwrap() {
                for span in ss["spans"].as_array().unwrap() {
                    assert_eq!(span["traceId"], CALLER_TRACE);
                    let name = span["name"].as_str().unwrap().to_owned();
                    if name == "invoke_agent general" {
                        root_parent = Some(span["parentSpanId"].clone());
                    }
                    names.push(name);
                }
            }
        }
    }
    names.sort();
    assert_eq!(
        names,
        [
            "chat scripted",
            "chat scripted",
            "execute_tool python_execute",
            "invoke_agent general"
        ]
    );
    assert_eq!(root_parent, Some(json!(CALLER_SPAN)));
}

#[test]
fn a_dead_collector_and_an_invalid_traceparent_cost_one_warning_each_never_the_run() {
    let closed = free_port();
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_find", "bash_find", &json!({"pattern": "*"})),
        text_turn("done"),
    ]);
    let started = Instant::now();
    let out = model
        .run_command(workspace.path(), sessions.path())
        .args([
            "--json",
            "--quiet",
            "--task",
            "Look.",
            "--tools",
            "bash_find",
        ])
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{closed}"),
        )
        .env("TRACEPARENT", "not-a-traceparent")
        .output()
        .unwrap();
    let took = started.elapsed();
    assert_nothing_runs_in(workspace.path());
    let result = result_of(&out);
    assert_eq!(result["content"][0]["text"], "done");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let count = |needle: &str| stderr.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(count("cannot export traces"), 1, "{stderr}");
    assert_eq!(count("ignoring TRACEPARENT"), 1, "{stderr}");
    assert_eq!(
        stderr.lines().filter(|l| l.contains("WARN")).count(),
        2,
        "{stderr}"
    );
    assert!(took < Duration::from_secs(10), "the run took {took:?}");
}
