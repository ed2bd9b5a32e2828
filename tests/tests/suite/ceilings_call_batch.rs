//! `subagent call` and `subagent batch --ceilings-from-flags` hold their
//! input under the command's flags, through the real binary and the
//! fixture worker: a payload field or a task line above them is refused
//! before anything starts; without `--ceilings-from-flags` a task line is
//! the operator's own input and keeps its power. Nothing the tests started
//! survives them.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::ceilings::session_files;
use super::support::*;

#[test]
fn call_refuses_payload_fields_above_its_flags_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let base = json!({
        "prompt": "fixture:success",
        "model": "fixture-model",
        "url": "http://127.0.0.1:9/v1",
        "tool_subset": ["bash_read"],
        "think": false,
        "max_tokens": 64,
    });
    let with = |field: &str, value: Value| {
        let mut payload = base.clone();
        payload[field] = value;
        payload
    };
    let cases = [
        (
            with("max_tokens", json!(4096)),
            "max_tokens 4096 is above `subagent call`'s ceiling of 64",
        ),
        (with("think", json!(true)), "reasoning is off"),
        (
            with("tool_subset", json!(["bash_read", "python_execute"])),
            "`python_execute`",
        ),
        (
            with("url", json!("http://attacker.invalid/v1")),
            "`url` is `http://attacker.invalid/v1`",
        ),
        (
            with("model", json!("bigger-model")),
            "`model` is `bigger-model`",
        ),
    ];
    for (payload, fragment) in cases {
        let mut call = Command::new(binary("subagent"));
        call.args(["call", "--worker", FIXTURE, "--model", "fixture-model"])
            .args(["--base-url", "http://127.0.0.1:9/v1", "--max-tokens", "64"])
            .args(["--tools", "bash_read,bash_find"])
            .arg("--workspace")
            .arg(dir.path())
            .arg("--sessions-dir")
            .arg(dir.path().join("sessions"))
            .env_remove("OPENAI_API_KEY");
        let out = spawn_with_stdin(&mut call, payload.to_string().as_bytes())
            .wait_with_output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(2), "{payload}: {stdout}");
        assert!(stdout.starts_with("Error: INVALID_INPUT: "), "{stdout}");
        assert!(stdout.contains(fragment), "`{fragment}` not in {stdout}");
    }
    assert_eq!(
        session_files(&dir.path().join("sessions")),
        Vec::<PathBuf>::new()
    );
    assert_nothing_runs_in(dir.path());
}

#[test]
fn batch_with_ceilings_from_flags_refuses_a_line_above_them_and_without_runs_it() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.jsonl");
    std::fs::write(
        &tasks,
        "{\"id\": \"t1\", \"task\": \"fixture:echo-spec\", \"limits\": {\"memory\": \"300M\"}}\n",
    )
    .unwrap();
    let batch = |results: &str, extra: &[&str]| {
        Command::new(binary("subagent"))
            .arg("batch")
            .arg(&tasks)
            .arg("--results")
            .arg(dir.path().join(results))
            .args(["--worker", FIXTURE, "--model", "fixture-model"])
            .args(["--base-url", "http://127.0.0.1:9/v1", "--memory", "256M"])
            .arg("--workspace")
            .arg(dir.path())
            .arg("--sessions-dir")
            .arg(dir.path().join("sessions"))
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = batch("refused.jsonl", &["--ceilings-from-flags"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("line 1: task `t1`"), "{stderr}");
    assert!(
        stderr.contains("limits.memory = 300M is above the batch's ceiling of 256M"),
        "{stderr}"
    );
    assert_eq!(
        session_files(&dir.path().join("sessions")),
        Vec::<PathBuf>::new()
    );

    // The tasks file is the operator's own input by default: its line wins.
    let out = batch("ran.jsonl", &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files = session_files(&dir.path().join("sessions"));
    assert_eq!(files.len(), 1);
    let header = &check_session_file(&files[0])[0];
    assert_eq!(header["limits"]["memoryBytes"], 300u64 << 20);
    assert_nothing_runs_in(dir.path());
}
