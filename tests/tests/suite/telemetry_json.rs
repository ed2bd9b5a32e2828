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

use super::cached_installs::python_venv;
use super::support::*;
use super::telemetry::{Phoenix, assert_nested_trace, free_port, traced_nested_run};

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
    let endpoint = rotel.endpoint();
    let (result, _sessions) = traced_nested_run(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ("OTEL_SERVICE_NAME", "subagent-json"),
    ]);
    let run_id = result["details"]["runId"].as_str().unwrap().to_owned();

    // The same trace as the protobuf test: the ids crossed as OTLP/JSON's
    // hex strings, the attributes as its typed values, and came out whole.
    assert_nested_trace(&phoenix, &run_id);
    rotel.stop();
    phoenix.stop();
}
