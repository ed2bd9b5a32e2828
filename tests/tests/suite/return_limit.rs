//! `--return-limit` bounds every copy of the answer a parent gets back:
//! `content`, `details.results[].output`, `displayItems` in `run --json`,
//! and a batch line's `output`; the full text is in the `fullOutputPath`
//! file, which the result and the batch line both name.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::resume_batch::scripted_batch;
use super::scripted_model::{ScriptedModel, text_turn};
use super::support::*;

/// An answer far above a 1K limit: 300 KB over 3,000 lines.
fn big_answer() -> String {
    (0..3000)
        .map(|n| format!("{n:05} {}\n", "x".repeat(93)))
        .collect()
}

/// Bytes one copy of the answer may take in JSON: the limit, its newlines
/// escaped, and the truncation marker.
const COPY: usize = 2 * 1024 + 256;
/// Everything else in a result: usage, sandbox, termination, paths.
const REST: usize = 16 * 1024;

/// `subagent batch` of `dir`'s tasks.jsonl against `model`, no tools,
/// results in `dir`'s results.jsonl.
fn batch_command(dir: &Path, model: &ScriptedModel) -> Command {
    let mut c = scripted_batch(dir, model);
    c.args(["--tools", "none"]);
    c
}

#[test]
fn a_run_over_the_return_limit_returns_every_copy_cut_and_keeps_the_full_text() {
    let dir = tempfile::tempdir().unwrap();
    let (ws, sessions) = (dir.path().join("ws"), dir.path().join("sessions"));
    std::fs::create_dir(&ws).unwrap();
    let answer = big_answer();
    let model = ScriptedModel::start(vec![text_turn(&answer)]);
    let out = model
        .run_command(&ws, &sessions)
        .args(["--tools", "none", "--return-limit", "1K", "--json"])
        .args(["--task", "write a lot"])
        .output()
        .unwrap();
    assert_nothing_runs_in(&ws);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let result: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is no JSON result ({e}); stderr: {stderr}"));
    assert_valid_result(&result);
    assert_children_reaped(&result);
    let single = &result["details"]["results"][0];
    // Three copies: content, output, displayItems.
    assert!(
        out.stdout.len() < 3 * COPY + REST,
        "{} bytes of JSON for a 1K limit: {}",
        out.stdout.len(),
        String::from_utf8_lossy(&out.stdout[..4096])
    );
    let output = single["output"].as_str().unwrap();
    assert!(output.contains("[output truncated:"), "{output}");
    let path = single["truncated"]["fullOutputPath"].as_str().unwrap();
    assert_eq!(std::fs::read_to_string(path).unwrap(), answer);
}

#[test]
fn a_batch_line_over_the_return_limit_carries_the_cut_output_and_where_the_full_text_is() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ws")).unwrap();
    std::fs::write(
        dir.path().join("tasks.jsonl"),
        "{\"id\":\"big\",\"task\":\"write a lot\"}\n",
    )
    .unwrap();
    let answer = big_answer();
    let model = ScriptedModel::start(vec![text_turn(&answer)]);
    let out = batch_command(dir.path(), &model)
        .args(["--return-limit", "1K"])
        .output()
        .unwrap();
    assert_nothing_runs_in(&dir.path().join("ws"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let text = std::fs::read_to_string(dir.path().join("results.jsonl")).unwrap();
    assert_eq!(text.lines().count(), 1, "{stderr}");
    assert!(text.len() < COPY + REST, "{} bytes: {stderr}", text.len());
    let line: Value = serde_json::from_str(text.trim_end()).unwrap();
    let output = line["output"].as_str().unwrap();
    assert!(output.len() <= 1024 + 256, "{} bytes", output.len());
    assert!(output.starts_with("00000 "), "{output}");
    assert!(output.contains("[output truncated:"), "{output}");
    let path = line["fullOutputPath"]
        .as_str()
        .unwrap_or_else(|| panic!("no fullOutputPath in {line}"));
    assert_eq!(std::fs::read_to_string(path).unwrap(), answer);
    // The same file the result names: beside the task's session file.
    let session = line["sessionFile"].as_str().unwrap();
    assert_eq!(path, session.replace(".jsonl", ".output.txt"), "{line}");
    assert_validates(&schema("batch-line.schema.json"), &line, "the batch line");
}

#[test]
fn a_batch_line_within_the_return_limit_has_no_full_output_path() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ws")).unwrap();
    std::fs::write(
        dir.path().join("tasks.jsonl"),
        "{\"id\":\"small\",\"task\":\"say hi\"}\n",
    )
    .unwrap();
    let model = ScriptedModel::start(vec![text_turn("hi")]);
    let out = batch_command(dir.path(), &model).output().unwrap();
    assert_nothing_runs_in(&dir.path().join("ws"));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(dir.path().join("results.jsonl")).unwrap();
    let line: Value = serde_json::from_str(text.trim_end()).unwrap();
    assert_validates(&schema("batch-line.schema.json"), &line, "the batch line");
    assert_eq!(line["output"], "hi");
    assert_eq!(line.get("fullOutputPath"), None, "{line}");
}
