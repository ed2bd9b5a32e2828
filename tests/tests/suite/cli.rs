//! The `subagent` binary as a user runs it: help, errors, exit codes, JSON
//! output, and that no worker outlives a killed supervisor.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::support::*;

fn subagent_bin() -> PathBuf {
    binary("subagent")
}

fn cli(dir: &Path) -> Command {
    fixture_cli(dir)
}

#[test]
fn help_teaches_the_flags_and_exit_codes() {
    let out = Command::new(subagent_bin())
        .args(["run", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "--task",
        "--provider",
        "--api-key-env",
        "--output-schema",
        "--max-turns",
        "--timeout",
        "--sessions-dir",
        "--json",
        "EXIT STATUS",
        "EXAMPLES",
    ] {
        assert!(help.contains(needle), "{needle} missing from help");
    }
}

#[test]
fn a_run_prints_the_result_object_with_json_and_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let out = cli(dir.path())
        .args(["--task", "fixture:success", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors: Vec<String> = schema("result.schema.json")
        .iter_errors(&json)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(json["content"][0]["text"], "fixture done: fixture:success");
    let lines = check_session_file(Path::new(
        json["details"]["results"][0]["sessionFile"]
            .as_str()
            .unwrap(),
    ));
    assert_reaped(&lines);
}

#[test]
fn a_missing_api_key_variable_is_a_clear_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = cli(dir.path())
        .args(["--task", "x", "--api-key-env", "SUBAGENT_TEST_SURELY_UNSET"])
        .env_remove("SUBAGENT_TEST_SURELY_UNSET")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("SUBAGENT_TEST_SURELY_UNSET is not set"),
        "{err}"
    );
}

#[test]
fn unknown_agents_exit_2_and_list_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let out = cli(dir.path())
        .args(["--task", "x", "--agent", "wizard"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("UNKNOWN_AGENT") && err.contains("Available agents: general"),
        "{err}"
    );
}

/// The pid in the session's start line, once the file has one.
fn wait_for_worker_pid(dir: &Path, deadline: Instant) -> u32 {
    loop {
        for file in walk(dir) {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            for line in text.lines() {
                let v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
                if v["eventType"] == "subagent:start"
                    && let Some(pid) = v["pid"].as_u64()
                {
                    return pid as u32;
                }
            }
        }
        assert!(Instant::now() < deadline, "no start line appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p))
        } else {
            out.push(p)
        }
    }
    out
}

#[test]
fn no_worker_outlives_a_killed_supervisor() {
    let dir = tempfile::tempdir().unwrap();
    let mut sup = cli(dir.path())
        .args(["--task", "fixture:sleep", "--timeout", "60"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = wait_for_worker_pid(dir.path(), Instant::now() + Duration::from_secs(20));
    assert!(
        Path::new(&format!("/proc/{pid}")).exists(),
        "worker running"
    );
    sup.kill().unwrap(); // SIGKILL: no cleanup code in the supervisor runs
    sup.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    // The worker is reparented (to init or a subreaper) and dies of the
    // parent-death signal; wait for it to be gone or a zombie.
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, r)| r.split_whitespace().next())
            .unwrap_or("gone");
        if state == "gone" || state == "Z" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "worker {pid} outlived its supervisor (state {state})"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigint_cancels_the_run_and_the_session_ends_aborted() {
    let dir = tempfile::tempdir().unwrap();
    let sup = cli(dir.path())
        .args(["--task", "fixture:sleep", "--timeout", "60", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = wait_for_worker_pid(dir.path(), Instant::now() + Duration::from_secs(20));
    // SAFETY: kill takes no pointers; the pid is our own unreaped child.
    unsafe { libc::kill(sup.id() as i32, libc::SIGINT) };
    let out = sup.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["details"]["error"]["code"], "SUBAGENT_CANCELLED");
    let lines = check_session_file(Path::new(
        json["details"]["results"][0]["sessionFile"]
            .as_str()
            .unwrap(),
    ));
    assert_eq!(lines.last().unwrap()["eventType"], "subagent:aborted");
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "worker {pid} survived"
    );
}

#[test]
fn tools_help_names_every_tool_and_what_confines_them() {
    let out = Command::new(subagent_bin())
        .args(["run", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in subagent_protocol::tool_names::BUILTIN_TOOLS
        .iter()
        .copied()
        .chain([
            "--tools",
            "--workspace",
            "--allow-network",
            "--require-sandbox",
            "--output-schema",
            "none",
        ])
    {
        assert!(help.contains(needle), "{needle} missing from help:\n{help}");
    }
    assert!(
        help.contains("tool call") && help.contains("every layer"),
        "--require-sandbox explains it covers tool calls:\n{help}"
    );
}

#[test]
fn an_unknown_tool_exits_2_with_the_known_tools_and_starts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let out = cli(&sessions)
        .args([
            "--task",
            "fixture:success",
            "--tools",
            "bash_read,nope",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors: Vec<String> = schema("result.schema.json")
        .iter_errors(&json)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(json["details"]["error"]["code"], "INVALID_INPUT");
    let message = json["details"]["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("unknown tool `nope` in the requested tools; known tools: "),
        "{message}"
    );
    for tool in subagent_protocol::tool_names::BUILTIN_TOOLS {
        assert!(message.contains(&format!("`{tool}`")), "{tool}: {message}");
    }
    // Refused at admission: no worker ran, so no session file exists and
    // the result names no child.
    assert_eq!(json["details"]["results"], serde_json::json!([]));
    assert!(
        walk(dir.path()).is_empty(),
        "nothing is written: {:?}",
        walk(dir.path())
    );
}

#[test]
fn report_back_as_a_tool_exits_2_and_points_at_output_schema() {
    let dir = tempfile::tempdir().unwrap();
    let out = cli(dir.path())
        .args(["--task", "fixture:success", "--tools", "report_back"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("INVALID_INPUT") && err.contains("--output-schema"),
        "{err}"
    );
    assert!(walk(dir.path()).is_empty(), "nothing is written");
}

#[test]
fn a_closed_stdout_ends_quietly_with_the_runs_own_exit_status() {
    // As in `subagent run --json | head -c 100`: the reader is gone before
    // the result is printed.
    let dir = tempfile::tempdir().unwrap();
    let mut child = cli(dir.path())
        .args(["--task", "fixture:success", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The run itself completed and left its session file.
    let sessions: Vec<PathBuf> = walk(dir.path())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let lines = check_session_file(&sessions[0]);
    assert_reaped(&lines);
}
