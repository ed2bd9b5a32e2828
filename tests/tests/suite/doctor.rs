//! `subagent doctor` as a user runs it: every probe on this machine, the
//! missing ones with their fixes and a non-zero exit, and the model
//! endpoint probe against a closed port and a tiny loopback server.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use subagent_test_support::http::{LoopbackHttp, Response};

use super::exit_codes;

use super::support::*;

/// `subagent doctor` in `dir`, with its home there too (no real config read);
/// none of the processes its probes start outlives it.
pub(super) fn doctor(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(binary("subagent"))
        .arg("doctor")
        .arg("--sessions-dir")
        .arg(dir.join("sessions"))
        .args(args)
        .current_dir(dir)
        .env("HOME", dir.join("home"))
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_BASE_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_nothing_runs_in(dir);
    out
}

pub(super) fn report(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "doctor --json printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

pub(super) fn probe<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no {name} probe in {report}"))
}

#[test]
fn doctor_finds_the_sandbox_layers_cgroup_and_python_on_this_machine() {
    let dir = tempfile::tempdir().unwrap();
    let out = doctor(dir.path(), &["--json"]);
    let report = report(&out);
    // CI machines of this kind have every layer; a developer's machine may
    // lack one, which is then reported rather than failed.
    let required = std::env::var_os("CI").is_some_and(|v| v == "true");
    for name in [
        "landlock",
        "seccomp",
        "namespaces",
        "filesystem_view",
        "workspace_layer",
        "network_stack",
        "cgroup",
        "python3",
    ] {
        let p = probe(&report, name);
        if p["ok"] == true {
            continue;
        }
        assert!(!required, "{name} is missing under CI: {p}");
        eprintln!("doctor: {name} is missing on this machine, accepted outside CI: {p}");
        assert!(p["fix"].is_string(), "{name} is missing without a fix: {p}");
    }
    if probe(&report, "cgroup")["ok"] == true {
        let detail = probe(&report, "cgroup")["detail"].as_str().unwrap();
        assert!(
            detail.starts_with("v1") || detail.starts_with("v2"),
            "{detail}"
        );
    }
    assert!(
        probe(&report, "python3")["detail"]
            .as_str()
            .unwrap()
            .starts_with('3')
    );
    assert!(probe(&report, "sessions-dir")["ok"] == true, "{report}");
    assert_eq!(
        report["ok"],
        report["probes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["ok"] == true)
    );
    let expected = if report["ok"] == true {
        exit_codes::OK
    } else {
        exit_codes::DOCTOR_MISSING
    };
    assert_eq!(out.status.code(), Some(expected), "{report}");
}

#[test]
fn doctor_prints_one_line_per_probe() {
    let dir = tempfile::tempdir().unwrap();
    let json = report(&doctor(dir.path(), &["--json"]));
    let out = doctor(dir.path(), &[]);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let probes = json["probes"].as_array().unwrap();
    assert_eq!(lines.len(), probes.len(), "{text}");
    for (line, p) in lines.iter().zip(probes) {
        let name = p["name"].as_str().unwrap();
        if p["ok"] == true {
            assert!(line.starts_with(&format!("ok  {name}: ")), "{line}");
        } else {
            assert!(line.starts_with(&format!("MISSING  {name}: ")), "{line}");
            assert!(line.contains(" -- "), "{line}");
        }
    }
}

#[test]
fn doctor_reports_a_sessions_dir_under_a_regular_file_as_missing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let out = Command::new(binary("subagent"))
        .args(["doctor", "--json", "--sessions-dir"])
        .arg(file.join("sessions"))
        .output()
        .unwrap();
    let report = report(&out);
    let p = probe(&report, "sessions-dir");
    assert_eq!(p["ok"], false, "{p}");
    assert!(p["fix"].as_str().unwrap().contains("--sessions-dir"), "{p}");
    assert_eq!(report["ok"], false);
    assert_eq!(out.status.code(), Some(exit_codes::DOCTOR_MISSING));
}

#[test]
fn doctor_reports_a_missing_worker_binary() {
    let dir = tempfile::tempdir().unwrap();
    let out = doctor(dir.path(), &["--worker", "/nonexistent"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with("MISSING  worker: /nonexistent") && l.contains(" -- ")),
        "{text}"
    );
    assert_eq!(out.status.code(), Some(exit_codes::DOCTOR_MISSING));
}

#[test]
fn doctor_reports_a_closed_model_endpoint_as_unreachable() {
    let dir = tempfile::tempdir().unwrap();
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/v1");
    let out = doctor(dir.path(), &["--json", "--base-url", &url]);
    let report = report(&out);
    let p = probe(&report, "endpoint");
    assert_eq!(p["ok"], false, "{p}");
    assert!(p["detail"].as_str().unwrap().contains("unreachable"), "{p}");
    assert!(p["fix"].is_string(), "{p}");
    assert_eq!(out.status.code(), Some(exit_codes::DOCTOR_MISSING));
}

/// A model server (the test support's stub) answering `GET /v1/models`
/// with a one-model list.
pub(super) fn model_list_server() -> LoopbackHttp {
    LoopbackHttp::start(|_| Response::json(200, r#"{"object":"list","data":[{"id":"m"}]}"#))
}

/// The one request `server` got, as text.
pub(super) fn the_request(server: &LoopbackHttp) -> String {
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    requests[0].text()
}

#[test]
fn doctor_reaches_a_model_endpoint_and_finds_the_model_listed() {
    let dir = tempfile::tempdir().unwrap();
    let server = model_list_server();
    let url = server.url("/v1");
    let out = doctor(
        dir.path(),
        &[
            "--json",
            "--base-url",
            &url,
            "--provider",
            "openai-chat",
            "--model",
            "m",
        ],
    );
    let request = the_request(&server);
    assert!(request.starts_with("GET /v1/models "), "{request}");
    let report = report(&out);
    let endpoint = probe(&report, "endpoint");
    assert_eq!(endpoint["ok"], true, "{endpoint}");
    assert!(
        endpoint["detail"]
            .as_str()
            .unwrap()
            .contains("1 model(s) listed")
    );
    let model = probe(&report, "model");
    assert_eq!(model["ok"], true, "{model}");
    assert_eq!(model["detail"], "m is listed");
}

#[test]
fn doctor_probes_every_configured_provider_and_names_the_file_to_fix() {
    let dir = tempfile::tempdir().unwrap();
    let server = model_list_server();
    let up = server.url("/v1");
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::create_dir_all(dir.path().join(".subagent")).unwrap();
    let config = dir.path().join(".subagent/config.toml");
    std::fs::write(
        &config,
        format!(
            "[providers.up]\nkind = \"openai-chat\"\nbase_url = \"{up}\"\nmodel = \"m\"\n\n\
             [providers.down]\nkind = \"anthropic\"\nbase_url = \"http://127.0.0.1:{closed}\"\n"
        ),
    )
    .unwrap();
    trust_project(dir.path(), &dir.path().join("home"));
    let out = doctor(dir.path(), &["--json"]);
    let request = the_request(&server);
    assert!(request.starts_with("GET /v1/models "), "{request}");
    let report = report(&out);
    let config_probe = probe(&report, "config");
    assert_eq!(config_probe["ok"], true, "{config_probe}");
    assert!(
        config_probe["detail"]
            .as_str()
            .unwrap()
            .contains(".subagent/config.toml")
    );
    let probes = report["probes"].as_array().unwrap();
    let named = |name: &str| -> Vec<&serde_json::Value> {
        probes.iter().filter(|p| p["name"] == name).collect()
    };
    let up_probes = named("provider up");
    assert!(
        !up_probes.is_empty() && up_probes.iter().all(|p| p["ok"] == true),
        "{report}"
    );
    assert!(
        up_probes.iter().any(|p| p["detail"] == "m is listed"),
        "{report}"
    );
    let down = named("provider down");
    assert_eq!(down.len(), 1, "{report}");
    assert_eq!(down[0]["ok"], false);
    assert!(
        down[0]["detail"].as_str().unwrap().contains("unreachable"),
        "{report}"
    );
    let fix = down[0]["fix"].as_str().unwrap();
    assert!(
        fix.contains("[providers.down]") && fix.contains(&config.display().to_string()),
        "{fix}"
    );
    assert_eq!(out.status.code(), Some(exit_codes::DOCTOR_MISSING));
}

#[test]
fn doctor_reports_a_malformed_config_with_its_line_and_skips_a_bad_agent_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    std::fs::create_dir_all(dir.path().join(".subagent/agents")).unwrap();
    std::fs::write(
        dir.path().join(".subagent/config.toml"),
        "[limits]\nmemroy = \"1G\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join(".subagent/agents/x.md"),
        "---\nname: x\nmaxTurns: many\n---\np",
    )
    .unwrap();
    trust_project(dir.path(), &dir.path().join("home"));
    let out = doctor(dir.path(), &["--json"]);
    let report = report(&out);
    let config = probe(&report, "config");
    assert_eq!(config["ok"], false);
    assert!(
        config["detail"]
            .as_str()
            .unwrap()
            .contains("config.toml:2: limits.memroy"),
        "{config}"
    );
    // A bad agent file is skipped, not a failure: the other agents work.
    let agents = probe(&report, "agents");
    assert_eq!(agents["ok"], true, "{agents}");
    assert!(
        agents["detail"]
            .as_str()
            .unwrap()
            .contains("1 agent file skipped"),
        "{agents}"
    );
    assert_eq!(out.status.code(), Some(exit_codes::DOCTOR_MISSING));
}
