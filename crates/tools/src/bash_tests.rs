use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;

use super::*;
use crate::run::{ToolCallOutput, run_tool};

async fn bash(arguments: serde_json::Value, ctx: &ToolContext) -> ToolCallOutput {
    run_tool(&Bash, &arguments.to_string(), ctx).await
}

fn ctx(workspace: &Path) -> ToolContext {
    ToolContext::new(workspace)
}

#[tokio::test]
async fn stdout_stderr_and_the_exit_code_reach_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let out = bash(
        serde_json::json!({"command": "echo out; echo err >&2; exit 3", "description": "probe"}),
        &ctx(dir.path()),
    )
    .await;
    assert!(out.is_error, "{out:?}");
    assert!(
        out.output
            .contains("exit code 3\n--- stdout ---\nout\n--- stderr ---\nerr\n"),
        "{}",
        out.output
    );
    let out = bash(serde_json::json!({"command": "true"}), &ctx(dir.path())).await;
    assert!(!out.is_error, "{out:?}");
    assert!(
        out.output
            .starts_with("exit code 0\n--- stdout: (empty) ---\n"),
        "{}",
        out.output
    );
}

#[tokio::test]
async fn the_cwd_is_the_workspace_and_files_stay() {
    let dir = tempfile::tempdir().unwrap();
    let out = bash(
        serde_json::json!({"command": "printf hi > made.txt && pwd && ls"}),
        &ctx(dir.path()),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert!(out.output.contains("made.txt"), "{}", out.output);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("made.txt")).unwrap(),
        "hi"
    );
}

#[tokio::test]
async fn writing_outside_the_workspace_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped.txt");
    let out = bash(
        serde_json::json!({"command": format!("echo x > {}", target.display())}),
        &ctx(dir.path()),
    )
    .await;
    assert!(out.is_error, "{out:?}");
    assert!(!target.exists());
}

#[tokio::test]
async fn the_timeout_is_in_milliseconds_and_capped() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let started = std::time::Instant::now();
    let out = bash(
        serde_json::json!({"command": "sleep 30", "timeout": 300}),
        &ctx,
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        out.output.contains("timed out after 0.3 s"),
        "{}",
        out.output
    );
    assert!(
        out.output
            .contains("pass a larger timeout (milliseconds, at most"),
        "{}",
        out.output
    );
    assert_eq!(
        call_timeout(Some(1e12), &ctx).unwrap(),
        ctx.max_timeout.max(ctx.timeout)
    );
    assert_eq!(call_timeout(None, &ctx).unwrap(), ctx.timeout);
    assert!(call_timeout(Some(0.0), &ctx).is_err());
    assert!(call_timeout(Some(f64::NAN), &ctx).is_err());
}

#[tokio::test]
async fn background_runs_empty_and_oversized_commands_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    for (arguments, said) in [
        (
            serde_json::json!({"command": "touch x", "run_in_background": true}),
            "run_in_background is not supported",
        ),
        (serde_json::json!({"command": "  "}), "command is empty"),
        (
            serde_json::json!({"command": format!("touch x; # {}", "a".repeat(MAX_COMMAND_BYTES))}),
            "bytes, more than the",
        ),
        (serde_json::json!({"cmd": "touch x"}), "unknown field `cmd`"),
    ] {
        let out = bash(arguments, &ctx).await;
        assert!(
            out.is_error && out.output.contains(said),
            "{said}: {}",
            out.output
        );
    }
    assert!(!dir.path().join("x").exists());
}
