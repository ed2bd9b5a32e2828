//! The shape of a batch results line (`schemas/batch-line.schema.json`):
//! `cliExit` is the CLI's exit for the task (a result object's `exitCode`
//! is the worker's), and a results file written before the rename, with
//! `exitCode`, still resumes: its lines are kept as they are and the new
//! ones say `cliExit`.

use std::path::Path;

use super::batch_cmd::{BatchDir, ids, ok_task};
use super::support::*;

/// A failed task's line as a batch wrote it before `cliExit` had its name.
const OLD_FAILED_LINE: &str = r#"{"id":"old","status":"failed","exitCode":1,"errorCode":"SUBAGENT_FAILED","error":"the worker crashed","agent":"general","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"cost":0.0,"turns":1},"durationMs":12}"#;

#[test]
fn a_results_file_with_exit_code_lines_resumes_and_new_lines_say_cli_exit() {
    let dir = BatchDir::new();
    dir.write_tasks(&[ok_task("old"), ok_task("new")]);
    std::fs::write(dir.path("results.jsonl"), format!("{OLD_FAILED_LINE}\n")).unwrap();

    let out = dir.batch("results.jsonl", &[]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_nothing_runs_in(&dir.workspace());
    // The old line's failure still counts: a re-run cannot turn it green.
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("1 already in results"), "{stderr}");

    let text = std::fs::read_to_string(dir.path("results.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0], OLD_FAILED_LINE,
        "the old line is kept byte for byte"
    );
    let results = dir.results("results.jsonl");
    assert_eq!(ids(&results), ["old", "new"], "`old` was not run again");
    let new = &results[1];
    assert_validates(&schema("batch-line.schema.json"), new, "the new line");
    assert_eq!(
        (new["status"].as_str(), new["cliExit"].as_i64()),
        (Some("ok"), Some(0))
    );
    assert_eq!(new.get("exitCode"), None, "{new}");
    assert_reaped(&check_session_file(Path::new(
        new["sessionFile"].as_str().unwrap(),
    )));
}

#[test]
fn a_failed_task_line_says_the_clis_exit_as_cli_exit() {
    let dir = BatchDir::new();
    dir.write_tasks(&[
        ok_task("fine"),
        r#"{"id":"bad","task":"fixture:fail"}"#.to_owned(),
    ]);
    let out = dir.batch("results.jsonl", &[]).output().unwrap();
    assert_nothing_runs_in(&dir.workspace());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let results = dir.results("results.jsonl");
    assert_eq!(results.len(), 2);
    for line in &results {
        assert_validates(&schema("batch-line.schema.json"), line, "a batch line");
        assert_eq!(line.get("exitCode"), None, "{line}");
        let want = if line["id"] == "bad" { 1 } else { 0 };
        assert_eq!(line["cliExit"], want, "{line}");
        assert_reaped(&check_session_file(Path::new(
            line["sessionFile"].as_str().unwrap(),
        )));
    }
}
