//! Secrets in a task and in the answer never reach the printed result or any
//! file under the sessions dir, through the real `subagent` binary and the
//! fixture worker (whose default mode answers `fixture done: <task>`, so the
//! task's secrets come back in the answer too). Ordinary text that merely
//! looks like a setting (`max_tokens: 4096`) comes back intact.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use super::support::*;

/// One secret of every family the masking crate knows, as it would be
/// pasted into a task; the second field is the part that must not leave.
const SECRETS: &[(&str, &str)] = &[
    (
        "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "4eC39HqLyjWDarjtT1zdp7dc",
    ),
    (
        "db postgres://admin:Tr0ub4dor3x9@db.internal:5432/app",
        "Tr0ub4dor3x9",
    ),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7xqpemLineOne0123456789\nQ2xhdWRlU2Vjb25kTGluZTAxMjM0NTY3ODk=\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA7xqpemLineOne0123456789",
    ),
    (
        "openai sk-proj-Zx9aBcDeFgHiJkLmNoPqRsTuVwXy01",
        "Zx9aBcDeFgHiJkLmNoPqRsTuVwXy01",
    ),
    (
        "github ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "abcdefghijklmnopqrstuvwxyz0123456789",
    ),
    ("aws AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    (
        "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    (
        "jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ),
    (
        "slack xoxb-1234567890-AbCdEfGhIjKl",
        "1234567890-AbCdEfGhIjKl",
    ),
    (
        "google AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    ),
    ("DB_PASSWORD=hunter2hunter2", "hunter2hunter2"),
];

/// Text that must come back exactly as it was sent.
const ORDINARY: &str = "max_tokens: 4096";

/// `subagent run --json` of `task` on the fixture worker, sessions in `dir`.
fn run(dir: &Path, task: &str, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(binary("subagent"));
    cmd.args(["run", "--json", "--worker", FIXTURE])
        .arg("--sessions-dir")
        .arg(dir)
        .args(["--model", "fixture-model"])
        .args(["--base-url", "http://127.0.0.1:9/v1"])
        .args(["--task", task])
        .stdin(Stdio::null());
    for (name, value) in env {
        cmd.env(name, value);
    }
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Every file under `dir`, with its text.
fn files_under(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
                found.push((path, text));
            }
        }
    }
    found
}

/// The printed result without `details.results[].task`, the task echoed
/// back as given: that field is checked on its own by
/// [`the_task_echoed_in_the_result_is_masked`].
fn printed_without_echoed_task(stdout: &str) -> String {
    let mut json: Value = serde_json::from_str(stdout).unwrap();
    if let Some(results) = json["details"]["results"].as_array_mut() {
        for result in results {
            if let Some(result) = result.as_object_mut() {
                result.remove("task");
            }
        }
    }
    json.to_string()
}

/// Where `needle` shows up: the printed result (but its echoed task) and
/// every line of every file under the sessions dir, each named so a
/// failure says where it leaked.
fn leaks(needle: &str, stdout: &str, dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    if printed_without_echoed_task(stdout).contains(needle) {
        found.push("the printed result".to_owned());
    }
    for (path, text) in files_under(dir) {
        for (n, line) in text.lines().enumerate() {
            if line.contains(needle) {
                found.push(format!("{} line {}", path.display(), n + 1));
            }
        }
    }
    found
}

/// The printed result's JSON and the run's session lines.
fn result_and_session(stdout: &str) -> (Value, Vec<Value>) {
    let json: Value = serde_json::from_str(stdout).unwrap();
    assert_children_reaped(&json);
    let session = json["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap()
        .to_owned();
    (json, check_session_file(Path::new(&session)))
}

/// A task holding one secret of every family, and ordinary text.
fn task_with_every_secret() -> String {
    let mut task = String::from("Please check these settings:\n");
    for (text, _) in SECRETS {
        task.push_str(text);
        task.push('\n');
    }
    task.push_str(ORDINARY);
    task.push('\n');
    task
}

#[test]
fn secrets_of_every_family_are_masked_in_the_result_and_the_session_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &task_with_every_secret(), &[]);
    let stdout = String::from_utf8(out.stdout).unwrap();

    let leaked: Vec<String> = SECRETS
        .iter()
        .flat_map(|(_, secret)| {
            leaks(secret, &stdout, dir.path())
                .into_iter()
                .map(move |at| format!("{secret} in {at}"))
        })
        .collect();
    assert!(leaked.is_empty(), "secrets leaked:\n{}", leaked.join("\n"));

    let (json, lines) = result_and_session(&stdout);
    let answer = json["content"][0]["text"].as_str().unwrap();
    assert!(answer.starts_with("fixture done: "), "{answer}");
    assert!(
        answer.contains(ORDINARY),
        "{ORDINARY} was changed: {answer}"
    );
    assert!(answer.contains("***"), "{answer}");
    let header_task = lines[0]["task"].as_str().unwrap();
    assert!(header_task.contains(ORDINARY), "{header_task}");
    assert!(
        header_task.contains("postgres://admin:***@db.internal"),
        "URL kept readable around the password: {header_task}"
    );
}

#[test]
fn a_secret_in_the_supervisors_environment_is_masked_by_value() {
    // No shape would find this value: only the environment tells it apart.
    const VALUE: &str = "zq8-Frobnicate-Wibble-5531";
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        &format!("the service answered {VALUE} today; {ORDINARY}"),
        &[("MY_SERVICE_TOKEN", VALUE)],
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let leaked = leaks(VALUE, &stdout, dir.path());
    assert!(leaked.is_empty(), "{VALUE} leaked in {leaked:?}");

    let (json, lines) = result_and_session(&stdout);
    let answer = json["content"][0]["text"].as_str().unwrap();
    assert!(answer.contains("answered *** today"), "{answer}");
    assert!(answer.contains(ORDINARY), "{answer}");
    assert!(
        lines[0]["task"]
            .as_str()
            .unwrap()
            .contains("answered *** today")
    );
}

#[test]
fn the_task_echoed_in_the_result_is_masked() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &task_with_every_secret(), &[]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_children_reaped(&json);
    let echoed = json["details"]["results"][0]["task"].as_str().unwrap();
    let leaked: Vec<&str> = SECRETS
        .iter()
        .map(|(_, secret)| *secret)
        .filter(|secret| echoed.contains(secret))
        .collect();
    assert!(leaked.is_empty(), "echoed task leaks {leaked:?}: {echoed}");
    assert!(echoed.contains(ORDINARY), "{echoed}");
}
