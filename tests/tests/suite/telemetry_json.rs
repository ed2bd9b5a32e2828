//! OTLP/HTTP JSON end to end through a real collector: the `subagent` CLI
//! exports with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json` to Rotel (PyPI
//! `rotel`, a Rust OpenTelemetry collector whose wheel bundles its
//! binary), which decodes the JSON and forwards the spans as OTLP to Arize
//! Phoenix; the test queries Phoenix. Phoenix alone takes protobuf only
//! (415 for JSON), and no other JSON-capable receiver installs from the
//! registries here (the OpenTelemetry Collector and Jaeger ship as
//! binaries and images). What the bytes on the wire are (JSON, the
//! headers) is `telemetry.rs`'s loopback test; this one proves a
//! collector nobody here wrote reads them into the right trace: hex ids,
//! parent links and attributes as OTLP/JSON spells them.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::cached_installs::python_venv;
use super::scripted_model::{ScriptedModel, TEXT_RESPONSE_ID, tool_call_response_id};
use super::support::*;
use super::telemetry::{
    CALLER_SPAN, CALLER_TRACE, Phoenix, attr, caller_traceparent, free_port, named, nested_script,
    result_of, run_nested,
};

const ROTEL: &str = "rotel==0.0.1a15";

/// A Rotel collector on free loopback ports forwarding to `to` (an
/// OTLP/HTTP base URL), in a directory of its own; killed and reaped on
/// drop.
struct Rotel {
    child: Child,
    http_port: u16,
    dir: tempfile::TempDir,
}

impl Rotel {
    fn start(test: &str, to: &str) -> Option<Self> {
        let venv = python_venv(test, "rotel-0.0.1a15", &[ROTEL])?;
        let agent = rotel_agent(&venv);
        let dir = tempfile::tempdir().unwrap();
        let http_port = free_port();
        let child = Command::new(&agent)
            .arg("start")
            .args([
                "--otlp-grpc-endpoint",
                &format!("127.0.0.1:{}", free_port()),
            ])
            .args(["--otlp-http-endpoint", &format!("127.0.0.1:{http_port}")])
            .args(["--exporter", "otlp", "--otlp-exporter-protocol", "http"])
            .args(["--otlp-exporter-endpoint", to])
            // Spans go on as they come: the test waits on Phoenix, not on
            // a batch timer.
            .arg("--disable-batching")
            .arg("--pid-file")
            .arg(dir.path().join("rotel.pid"))
            .arg("--log-file")
            .arg(dir.path().join("rotel-agent.log"))
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("rotel.log")).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", agent.display()));
        let mut rotel = Self {
            child,
            http_port,
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", http_port)).is_err() {
            if let Ok(Some(status)) = rotel.child.try_wait() {
                panic!("Rotel exited ({status}): {}", rotel.log());
            }
            assert!(
                Instant::now() < deadline,
                "Rotel never listened: {}",
                rotel.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(rotel)
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.http_port)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("rotel.log")).unwrap_or_default()
    }

    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        assert_nothing_runs_in(self.dir.path());
    }
}

impl Drop for Rotel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The collector binary the `rotel` wheel ships inside its package.
fn rotel_agent(venv: &Path) -> PathBuf {
    let out = Command::new(venv.join("bin/python"))
        .args([
            "-c",
            "import os, rotel; print(os.path.join(os.path.dirname(rotel.__file__), 'rotel-agent'))",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

#[test]
fn http_json_spans_reach_phoenix_through_a_real_collector_as_one_trace() {
    let test = "http_json_spans_reach_phoenix_through_a_real_collector_as_one_trace";
    let Some(phoenix) = Phoenix::start(test) else {
        return;
    };
    let Some(rotel) = Rotel::start(test, &phoenix.endpoint()) else {
        return;
    };
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("a.txt"), "a").unwrap();
    let model = ScriptedModel::start(nested_script());
    let endpoint = rotel.endpoint();
    let out = run_nested(
        &model,
        workspace.path(),
        sessions.path(),
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_SERVICE_NAME", "subagent-json"),
            ("TRACEPARENT", &caller_traceparent()),
        ],
    );
    assert_nothing_runs_in(workspace.path());
    let result = result_of(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("WARN"), "no warning expected: {stderr}");
    let run_id = result["details"]["runId"].as_str().unwrap().to_owned();

    // The same tree as the protobuf test: 2 runs, 4 turns, 2 tool calls.
    let spans = phoenix.spans(8);
    assert_eq!(spans.len(), 8, "{spans:#?}\n{}", rotel.log());
    for span in &spans {
        // The ids crossed as OTLP/JSON's hex strings and came out whole.
        assert_eq!(span["context"]["trace_id"], CALLER_TRACE, "{span:#}");
    }
    let agents = named(&spans, "invoke_agent general");
    assert_eq!(agents.len(), 2, "{spans:#?}");
    let root = agents
        .iter()
        .find(|s| attr(s, "subagent.run_id") == run_id.as_str())
        .expect("the root run's span");
    let grandchild = agents
        .iter()
        .find(|s| s["context"]["span_id"] != root["context"]["span_id"])
        .unwrap();
    assert_eq!(root["parent_id"], CALLER_SPAN);
    assert_eq!(attr(root, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(attr(root, "gen_ai.agent.name"), "general");
    assert_eq!(attr(root, "gen_ai.request.model"), "scripted");
    assert_eq!(attr(root, "subagent.status"), "ok");

    let sub = named(&spans, "execute_tool subagent");
    let find = named(&spans, "execute_tool bash_find");
    assert_eq!((sub.len(), find.len()), (1, 1), "{spans:#?}");
    for (span, call_id) in [(sub[0], "call_sub"), (find[0], "call_find")] {
        assert_eq!(span["parent_id"], root["context"]["span_id"]);
        assert_eq!(attr(span, "gen_ai.tool.call.id"), call_id);
        assert_eq!(attr(span, "subagent.tool.outcome"), "ok");
    }
    assert_eq!(grandchild["parent_id"], sub[0]["context"]["span_id"]);

    let chats = named(&spans, "chat scripted");
    assert_eq!(chats.len(), 4, "{spans:#?}");
    let mut ids: Vec<Value> = chats
        .iter()
        .map(|c| attr(c, "gen_ai.response.id").clone())
        .collect();
    ids.sort_by_key(ToString::to_string);
    let mut sent: Vec<Value> = [
        tool_call_response_id("call_find"),
        tool_call_response_id("call_sub"),
        TEXT_RESPONSE_ID.to_owned(),
        TEXT_RESPONSE_ID.to_owned(),
    ]
    .into_iter()
    .map(Value::from)
    .collect();
    sent.sort_by_key(ToString::to_string);
    assert_eq!(ids, sent, "{chats:#?}");
    for chat in &chats {
        // Integers are strings in OTLP/JSON; Phoenix stored numbers.
        assert!(
            attr(chat, "gen_ai.usage.input_tokens").is_number(),
            "{chat:#}"
        );
    }
    rotel.stop();
    phoenix.stop();
}
