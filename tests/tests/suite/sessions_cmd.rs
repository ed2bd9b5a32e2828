//! `subagent sessions` against real session files: runs of the fixture
//! worker through the `subagent run` CLI, then `ls`, `show`, `tail` and
//! `gc` as an operator types them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::support::*;

/// `subagent run` of the fixture worker; returns the run's session file.
fn run_fixture(dir: &Path, task: &str, extra: &[&str]) -> PathBuf {
    let out = fixture_cli(dir)
        .args(["--task", task, "--json"])
        .args(extra)
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_children_reaped(&json);
    PathBuf::from(
        json["details"]["results"][0]["sessionFile"]
            .as_str()
            .unwrap(),
    )
}

/// `subagent sessions <args> --sessions-dir dir`.
pub(super) fn sessions(dir: &Path, args: &[&str]) -> Output {
    Command::new(binary("subagent"))
        .arg("sessions")
        .args(args)
        .arg("--sessions-dir")
        .arg(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stdout_ok(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn run_id(file: &Path) -> String {
    let name = file.file_name().unwrap().to_str().unwrap();
    name.split('-').next().unwrap().to_owned()
}

/// Drops the file's last line (its ending lifecycle line), as if the
/// supervisor had died before writing it.
fn cut_last_line(file: &Path) {
    let text = std::fs::read_to_string(file).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let last: Value = serde_json::from_str(lines.pop().unwrap()).unwrap();
    assert_eq!(last["type"], "agent_event");
    std::fs::write(file, lines.join("\n") + "\n").unwrap();
}

fn ls_json(dir: &Path, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["ls", "--json"];
    all.extend_from_slice(args);
    let json: Value = serde_json::from_str(&stdout_ok(&sessions(dir, &all))).unwrap();
    json.as_array().unwrap().clone()
}

fn statuses(rows: &[Value]) -> Vec<(String, String)> {
    rows.iter()
        .map(|r| {
            (
                r["runId"].as_str().unwrap().to_owned(),
                r["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn sessions_cmd_ls_shows_each_runs_status_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let done = run_fixture(dir.path(), "fixture:success", &[]);
    let failed = run_fixture(dir.path(), "fixture:sleep", &["--timeout", "1"]);
    let cut = run_fixture(dir.path(), "fixture:success", &["--agent", "explorer"]);
    cut_last_line(&cut);
    let (done, failed, cut) = (run_id(&done), run_id(&failed), run_id(&cut));

    // Newest first: the order the runs were made in, reversed.
    let rows = ls_json(dir.path(), &[]);
    assert_eq!(
        statuses(&rows),
        vec![
            (cut.clone(), "interrupted".to_owned()),
            (failed.clone(), "failed".to_owned()),
            (done.clone(), "completed".to_owned()),
        ]
    );
    assert_eq!(rows[2]["usage"]["input"], 10);

    let only = |args: &[&str]| -> Vec<String> {
        ls_json(dir.path(), args)
            .iter()
            .map(|r| r["runId"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(only(&["--status", "failed"]), vec![failed.clone()]);
    assert_eq!(only(&["--status", "interrupted"]), vec![cut.clone()]);
    assert_eq!(only(&["--agent", "explorer"]), vec![cut.clone()]);
    assert_eq!(only(&["--limit", "1"]), vec![cut.clone()]);
    assert_eq!(only(&["--since", "1h"]).len(), 3);

    // --since against a run whose header says it started two days ago.
    make_old(dir.path(), &done);
    assert_eq!(only(&["--since", "1d"]).len(), 3);
    assert!(only(&["--since", "3d"]).contains(&"0ld00000".to_owned()));

    let table = stdout_ok(&sessions(dir.path(), &["ls"]));
    assert!(table.starts_with("START"), "{table}");
    // Each run id as its shortest unique prefix, at least 8 digits.
    for id in [&done, &failed, &cut] {
        assert!(
            table
                .split_whitespace()
                .any(|word| word.len() >= 8 && id.starts_with(word)),
            "{id} not shown:\n{table}"
        );
    }
    for needle in ["interrupted", "failed", "completed", "fixture:sleep"] {
        assert!(table.contains(needle), "{needle} missing:\n{table}");
    }
    assert!(!table.contains('\x1b'), "no colour into a pipe");
}

/// A copy of the run `run` (found under `dir`) whose header timestamp is
/// two days old, filed under that day as run `0ld...`. Age is read from
/// the header, which is what `ls --since` and `gc` go by.
fn make_old(dir: &Path, run: &str) -> PathBuf {
    let src = find(dir, run);
    let text = std::fs::read_to_string(&src).unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let old = std::time::SystemTime::now() - Duration::from_secs(2 * 86_400);
    let stamp = subagent_protocol::time::rfc3339_ms(old);
    lines[0]["timestamp"] = Value::from(stamp.clone());
    lines[0]["runId"] = Value::from("0ld00000");
    let day = dir
        .join(&stamp[0..4])
        .join(&stamp[5..7])
        .join(&stamp[8..10]);
    std::fs::create_dir_all(&day).unwrap();
    let file = day.join("0ld00000-general.jsonl");
    let body: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&file, body.join("\n") + "\n").unwrap();
    std::fs::write(file.with_extension("output.txt"), "full output").unwrap();
    file
}

/// The session file of run `run` under `dir`.
fn find(dir: &Path, run: &str) -> PathBuf {
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().unwrap().to_str().unwrap().starts_with(run) {
                return p;
            }
        }
    }
    panic!("no file for {run} under {}", dir.display());
}

#[test]
fn sessions_cmd_show_prints_header_messages_and_closing_status() {
    let dir = tempfile::tempdir().unwrap();
    let file = run_fixture(dir.path(), "fixture:success", &[]);
    let id = run_id(&file);
    let text = stdout_ok(&sessions(dir.path(), &["show", &id[..4]]));
    for needle in [
        format!("session {id}").as_str(),
        "model        fixture-model (openai-chat)",
        "sandbox      applied:",
        "user (turn 0)",
        "fixture:success",
        "assistant (turn 1, stop stop)",
        "working on it",
        "tool call bash_read [call_1] {\"path\":\"README.md\"}",
        "tool result bash_read [call_1]",
        "usage turn 1: 10 in / 5 out",
        "subagent:start",
        "subagent:complete completed",
        "status completed after",
    ] {
        assert!(text.contains(needle), "{needle:?} missing:\n{text}");
    }

    // Half a JSON object appended, as after a crash mid-write.
    let mut torn = std::fs::read(&file).unwrap();
    torn.extend_from_slice(br#"{"type":"log","timestamp":"2026-"#);
    std::fs::write(&file, torn).unwrap();
    let text = stdout_ok(&sessions(dir.path(), &["show", file.to_str().unwrap()]));
    assert!(text.contains("is torn"), "{text}");
    assert!(text.contains("status completed after"), "{text}");
}

#[test]
fn sessions_cmd_tail_prints_and_follow_ends_at_the_terminal_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = run_fixture(dir.path(), "fixture:success", &[]);
    let id = run_id(&file);
    let text = stdout_ok(&sessions(dir.path(), &["tail", &id]));
    assert!(text.contains(&format!("session {id}")), "{text}");
    assert!(text.contains("subagent:complete"), "{text}");

    let mut child = Command::new(binary("subagent"))
        .args(["sessions", "tail", "-f", &id, "--sessions-dir"])
        .arg(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("tail -f on a finished run did not end by itself");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("subagent:complete"), "{text}");
    assert!(text.contains("status completed after"), "{text}");
}

#[test]
fn sessions_cmd_gc_removes_only_runs_started_before_the_cutoff() {
    let dir = tempfile::tempdir().unwrap();
    let fresh = run_fixture(dir.path(), "fixture:success", &[]);
    let old = make_old(dir.path(), &run_id(&fresh));
    let old_output = old.with_extension("output.txt");

    let text = stdout_ok(&sessions(
        dir.path(),
        &["gc", "--older-than", "1d", "--dry-run"],
    ));
    assert!(
        text.contains("would remove") && text.contains("0ld00000"),
        "{text}"
    );
    assert!(
        old.exists() && old_output.exists(),
        "dry run removed nothing"
    );

    let text = stdout_ok(&sessions(dir.path(), &["gc", "--older-than", "1d"]));
    assert!(text.contains("1 session(s) removed"), "{text}");
    assert!(!old.exists() && !old_output.exists());
    assert!(
        !old.parent().unwrap().exists(),
        "the emptied day dir went too"
    );
    assert!(fresh.exists());
}

#[test]
fn sessions_cmd_unknown_run_id_fails_naming_the_sessions_dir() {
    let dir = tempfile::tempdir().unwrap();
    let out = sessions(dir.path(), &["show", "nosuchrun"]);
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nosuchrun") && err.contains(&dir.path().display().to_string()),
        "{err}"
    );
}

#[test]
fn sessions_cmd_help_teaches_with_examples() {
    for sub in ["ls", "show", "tail", "gc"] {
        let out = Command::new(binary("subagent"))
            .args(["sessions", sub, "--help"])
            .output()
            .unwrap();
        let help = stdout_ok(&out);
        assert!(
            help.contains("EXAMPLES") && help.contains(&format!("subagent sessions {sub}")),
            "{sub}: {help}"
        );
    }
}
