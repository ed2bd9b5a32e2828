//! `subagent run --parallel` and `--chain` as a user runs them: the result
//! object's mode and per-task results, one session file per child, exit
//! codes, `{previous}` reaching the next step, and a real model doing both.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use super::llama::LlamaServer;
use super::support::*;

/// `subagent run` with the fixture worker and sessions in `dir`.
fn cli(dir: &Path) -> Command {
    let mut c = fixture_cli(dir);
    c.arg("--json");
    c
}

fn result_of(out: &Output) -> Value {
    let result = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not a result object ({e}); stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_children_reaped(&result);
    result
}

fn session_files(result: &Value) -> Vec<PathBuf> {
    result["details"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| PathBuf::from(r["sessionFile"].as_str().unwrap()))
        .collect()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

#[test]
fn modes_parallel_runs_every_task_in_order_with_its_own_session_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = cli(dir.path())
        .args(["--parallel", "--concurrency", "2"])
        .args(["--task", "fixture:success one"])
        .args(["--task", "fixture:success two"])
        .args(["--task", "fixture:success three"])
        .output()
        .unwrap();
    let result = result_of(&out);
    assert_eq!(out.status.code(), Some(0), "{result:#}");
    assert_valid_result(&result);
    assert_eq!(result["details"]["mode"], "parallel");
    assert_eq!(result["details"]["runId"].as_str().unwrap().len(), 32);
    let results = result["details"]["results"].as_array().unwrap();
    let tasks: Vec<&str> = results
        .iter()
        .map(|r| r["task"].as_str().unwrap())
        .collect();
    assert_eq!(
        tasks,
        [
            "fixture:success one",
            "fixture:success two",
            "fixture:success three"
        ]
    );
    let files = session_files(&result);
    assert_eq!(files.len(), 3);
    for (file, task) in files.iter().zip(&tasks) {
        let lines = check_session_file(file);
        assert_eq!(lines[0]["task"], *task);
        let last = lines.last().unwrap();
        assert_eq!(last["eventType"], "subagent:complete");
        assert_eq!(last["mode"], "parallel");
    }
    let summary = text(&result);
    assert!(
        summary.contains("[1] completed: fixture:success one"),
        "{summary}"
    );
    assert!(
        summary.contains("fixture done: fixture:success three"),
        "{summary}"
    );
    assert!(
        summary.ends_with("3 tasks: 3 completed, 0 failed"),
        "{summary}"
    );
}

#[test]
fn modes_parallel_with_one_failing_task_exits_non_zero_and_still_runs_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let out = cli(dir.path())
        .arg("--parallel")
        .args(["--task", "fixture:success a"])
        .args(["--task", "fixture:fail"])
        .args(["--task", "fixture:success c"])
        .output()
        .unwrap();
    let result = result_of(&out);
    assert_valid_result(&result);
    assert_eq!(out.status.code(), Some(1), "{result:#}");
    assert_eq!(result["details"]["error"]["code"], "SUBAGENT_FAILED");
    let results = result["details"]["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["output"], "fixture done: fixture:success a");
    assert_eq!(results[2]["output"], "fixture done: fixture:success c");
    assert!(results[1]["error"].is_string(), "{:#}", results[1]);
    let summary = text(&result);
    assert!(
        summary.contains("[2] failed (SUBAGENT_FAILED)"),
        "{summary}"
    );
    assert!(
        summary.ends_with("3 tasks: 2 completed, 1 failed"),
        "{summary}"
    );
}

#[test]
fn modes_parallel_reads_tasks_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tasks.txt");
    std::fs::write(&file, "fixture:success x\n\n  fixture:success y\n").unwrap();
    let out = cli(&dir.path().join("sessions"))
        .arg("--parallel")
        .arg("--tasks")
        .arg(&file)
        .output()
        .unwrap();
    let result = result_of(&out);
    assert_eq!(out.status.code(), Some(0), "{result:#}");
    assert_eq!(result["details"]["results"].as_array().unwrap().len(), 2);
}

#[test]
fn modes_chain_passes_the_previous_output_into_the_next_task() {
    let dir = tempfile::tempdir().unwrap();
    let out = cli(dir.path())
        .arg("--chain")
        .args(["--task", "fixture:success first"])
        .args(["--task", "then: {previous}"])
        .output()
        .unwrap();
    let result = result_of(&out);
    assert_eq!(out.status.code(), Some(0), "{result:#}");
    assert_valid_result(&result);
    assert_eq!(result["details"]["mode"], "chain");
    let files = session_files(&result);
    assert_eq!(files.len(), 2);
    let second = check_session_file(&files[1]);
    let expected_task = "then: fixture done: fixture:success first";
    // The header records the task the child was given, after substitution.
    assert_eq!(second[0]["task"], expected_task);
    assert_eq!(second.last().unwrap()["mode"], "chain");
    assert_eq!(text(&result), format!("fixture done: {expected_task}"));
}

#[test]
fn modes_chain_stops_at_a_failing_first_step() {
    let dir = tempfile::tempdir().unwrap();
    let out = cli(dir.path())
        .arg("--chain")
        .args(["--task", "fixture:fail"])
        .args(["--task", "fixture:success {previous}"])
        .args(["--task", "fixture:success again"])
        .output()
        .unwrap();
    let result = result_of(&out);
    assert_valid_result(&result);
    assert_eq!(out.status.code(), Some(1), "{result:#}");
    assert_eq!(result["details"]["results"].as_array().unwrap().len(), 1);
    assert_eq!(result["details"]["error"]["code"], "SUBAGENT_FAILED");
    assert!(
        text(&result).ends_with(
            "chain stopped at step 1 of 3 (SUBAGENT_FAILED): 2 later steps were not run"
        ),
        "{}",
        text(&result)
    );
}

#[test]
fn modes_concurrency_above_the_limit_is_a_usage_error_naming_the_maximum() {
    let dir = tempfile::tempdir().unwrap();
    let out = cli(dir.path())
        .args([
            "--parallel",
            "--concurrency",
            "999",
            "--task",
            "fixture:success",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("1 to 16"), "{stderr}");
    assert!(
        std::fs::read_dir(dir.path()).map_or(true, |mut d| d.next().is_none()),
        "nothing ran"
    );
}

#[test]
fn modes_help_teaches_parallel_and_chain() {
    let out = Command::new(binary("subagent"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "--parallel",
        "--chain",
        "--concurrency",
        "--tasks",
        "{previous}",
        "first failing task",
    ] {
        assert!(help.contains(needle), "{needle} missing from help");
    }
}

/// The real worker and model: a 2-task batch and a 2-step chain both succeed.
#[test]
fn modes_parallel_and_chain_against_the_real_model() {
    let Some(server) =
        LlamaServer::start_or_skip("modes_parallel_and_chain_against_the_real_model")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let real = |mode: &str, tasks: &[&str]| {
        let mut c = Command::new(binary("subagent"));
        // The sessions dir apart from the workspace: a workspace inside
        // the sessions dir is refused (a tool could rewrite the files).
        let sessions = dir.path().join("sessions");
        let workspace = dir.path().join("work");
        std::fs::create_dir_all(&workspace).unwrap();
        c.arg("run")
            .arg("--worker")
            .arg(binary("subagent-worker"))
            .arg("--sessions-dir")
            .arg(&sessions)
            .arg("--workspace")
            .arg(&workspace)
            .args(["--model", "smollm2", "--base-url", &server.base_url()])
            .args([
                "--temperature",
                "0",
                "--max-tokens",
                "32",
                "--max-turns",
                "2",
            ])
            .args(["--tools", "none", "--timeout", "120s", "--json", mode])
            .stdin(Stdio::null());
        for task in tasks {
            c.args(["--task", task]);
        }
        let out = c.output().unwrap();
        let result = result_of(&out);
        assert_eq!(out.status.code(), Some(0), "{result:#}");
        assert_valid_result(&result);
        result
    };
    let batch = real("--parallel", &["Say hello.", "Name a colour."]);
    assert_eq!(batch["details"]["mode"], "parallel");
    assert_eq!(batch["details"]["results"].as_array().unwrap().len(), 2);
    for file in session_files(&batch) {
        check_session_file(&file);
    }
    let chain = real("--chain", &["Name a fruit.", "Repeat this: {previous}"]);
    assert_eq!(chain["details"]["mode"], "chain");
    let files = session_files(&chain);
    assert_eq!(files.len(), 2);
    let second = check_session_file(&files[1]);
    let task = second[0]["task"].as_str().unwrap();
    assert!(
        task.starts_with("Repeat this: ") && !task.contains("{previous}"),
        "{task}"
    );
}
