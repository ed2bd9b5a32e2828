//! MCP servers of a run, through the agent loop with a scripted model: a
//! fixture server (tests/fixtures/mcp_fixture.py, standard library only)
//! started in the tool sandbox, its tools offered as `mcp__SERVER__TOOL`,
//! and every way a server can misbehave ending as a tool error or a note,
//! never as a failed run, with no server process left afterwards.
//!
//! The real servers of the ecosystem are tested through the CLI
//! (tests/tests/suite/mcp_servers.rs).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use subagent_protocol::message::LogLevel;
use subagent_protocol::{
    ApiKey, McpEnvVar, McpServerSpec, McpToolSelection, StopReason, TaskSpec, WorkerEvent,
};
use subagent_test_support::processes::survivors;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use super::loop_support::{Ran, calls, run, run_with, spec, test_tools, text};

const PYTHON: &str = "/usr/bin/python3";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A run's spec with the fixture server `fx` in `mode`, in a fresh workspace;
/// `marker` is on the server's command line so the test can find it.
struct Setup {
    spec: TaskSpec,
    workspace: TempDir,
    marker: String,
}

fn setup(mode: &str) -> Setup {
    let workspace = tempfile::tempdir().unwrap();
    let marker = format!("mcp-fixture-{}-{}", std::process::id(), unique());
    let mut spec = spec();
    spec.workspace_dir = workspace.path().display().to_string();
    spec.mcp_servers = vec![McpServerSpec {
        name: "fx".into(),
        command: PYTHON.into(),
        args: vec![
            fixtures().join("mcp_fixture.py").display().to_string(),
            mode.into(),
            marker.clone(),
        ],
        env: Vec::new(),
        read_only: vec![fixtures().display().to_string()],
        startup_timeout_ms: 10_000,
        tool_timeout_ms: 10_000,
        tools: McpToolSelection::default(),
    }];
    Setup {
        spec,
        workspace,
        marker,
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::SeqCst)
}

fn assert_nothing_left(setup: &Setup) {
    let alive = survivors(&setup.marker);
    assert!(
        alive.is_empty(),
        "server processes survived the run: {alive:?}"
    );
}

fn logs(ran: &Ran) -> Vec<(LogLevel, String)> {
    ran.events
        .iter()
        .filter_map(|e| match e {
            WorkerEvent::Log { level, message } => Some((*level, message.clone())),
            _ => None,
        })
        .collect()
}

fn offered(ran: &Ran) -> Vec<String> {
    ran.requests[0]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect()
}

#[tokio::test]
async fn a_servers_tools_are_offered_by_their_mcp_names_and_answer_through_the_sandbox() {
    let setup = setup("ok");
    std::fs::write(setup.workspace.path().join("inside.txt"), "inside line\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret_file = outside.path().join("secret.txt");
    std::fs::write(&secret_file, "host secret\n").unwrap();
    let read_inside = format!(
        r#"{{"path":"{}"}}"#,
        setup.workspace.path().join("inside.txt").display()
    );
    let read_outside = format!(r#"{{"path":"{}"}}"#, secret_file.display());
    let ran = run(
        &setup.spec,
        vec![
            calls(
                "",
                &[
                    ("mcp__fx__echo", r#"{"text":"hello from the model"}"#),
                    ("mcp__fx__picture", "{}"),
                    ("mcp__fx__fail", "{}"),
                    ("mcp__fx__read", &read_inside),
                    ("mcp__fx__read", &read_outside),
                ],
            ),
            text("done"),
        ],
        None,
    )
    .await;
    assert_eq!(
        ran.outcome.stop_reason,
        StopReason::Completed,
        "{:?}",
        ran.outcome
    );
    assert_eq!(
        offered(&ran),
        [
            "echo",
            "fail",
            "mcp__fx__echo",
            "mcp__fx__picture",
            "mcp__fx__env",
            "mcp__fx__read",
            "mcp__fx__fail",
        ]
    );
    let echo = &ran.requests[0].tools[2];
    assert_eq!(echo.description, "Says the text back. (MCP server `fx`)");
    assert_eq!(echo.parameters["required"], serde_json::json!(["text"]));
    let results = ran.tool_results();
    assert_eq!(
        results[0],
        ("mcp__fx__echo".into(), "hello from the model".into(), false)
    );
    assert_eq!(
        results[1].1,
        "a picture:\n[image content: image/png, 8 bytes, not shown]"
    );
    assert!(
        results[2].2,
        "a tool error stays an error: {:?}",
        results[2]
    );
    assert!(
        results[2].1.contains("it failed as asked"),
        "{:?}",
        results[2]
    );
    assert_eq!(results[3].1, "inside line");
    assert!(
        results[4].2 && !results[4].1.contains("host secret"),
        "a file outside the workspace must not be readable through the server: {:?}",
        results[4]
    );
    let logs = logs(&ran);
    assert!(
        logs.iter().any(|(level, m)| *level == LogLevel::Info
            && m.contains("the MCP server `fx` started in")
            && m.contains("5 offered")),
        "{logs:?}"
    );
    assert!(
        logs.iter()
            .any(|(_, m)| m.starts_with("the MCP server `fx` stopped: exit code 0")),
        "{logs:?}"
    );
    assert_nothing_left(&setup);
}

#[tokio::test]
async fn configured_variables_reach_the_server_and_their_values_come_back_masked() {
    let mut setup = setup("ok");
    setup.spec.mcp_servers[0].env = vec![McpEnvVar {
        name: "FIXTURE_TOKEN".into(),
        value: ApiKey::new("tok-0123456789abcdef"),
    }];
    let ran = run(
        &setup.spec,
        vec![
            calls(
                "",
                &[
                    ("mcp__fx__env", r#"{"name":"FIXTURE_TOKEN"}"#),
                    ("mcp__fx__env", r#"{"name":"OPENAI_API_KEY"}"#),
                ],
            ),
            text("done"),
        ],
        None,
    )
    .await;
    let results = ran.tool_results();
    assert_eq!(
        results[0].1, "***",
        "the value reached it and came back masked"
    );
    assert_eq!(
        results[1].1, "(unset)",
        "nothing else of the worker's environment"
    );
    assert_nothing_left(&setup);
}

#[tokio::test]
async fn a_selection_offers_only_the_named_tools_and_says_which_names_the_server_lacks() {
    let mut setup = setup("ok");
    setup.spec.mcp_servers[0].tools = McpToolSelection {
        only: Some(vec!["echo".into(), "read".into(), "nosuch".into()]),
        disabled: vec!["read".into()],
    };
    let ran = run(&setup.spec, vec![text("done")], None).await;
    assert_eq!(offered(&ran), ["echo", "fail", "mcp__fx__echo"]);
    assert!(
        logs(&ran)
            .iter()
            .any(|(level, m)| *level == LogLevel::Warn && m.contains("no tool named `nosuch`")),
        "{:?}",
        logs(&ran)
    );
    assert_nothing_left(&setup);
}

/// Runs `mode`'s server with a 1 s tool timeout: one call, then a text turn.
async fn one_call(mode: &str) -> (Setup, Ran, Duration) {
    let mut setup = setup(mode);
    setup.spec.mcp_servers[0].tool_timeout_ms = 1_000;
    let begun = Instant::now();
    let ran = run(
        &setup.spec,
        vec![
            calls("", &[("mcp__fx__echo", r#"{"text":"x"}"#)]),
            text("went on"),
        ],
        None,
    )
    .await;
    (setup, ran, begun.elapsed())
}

#[tokio::test]
async fn a_server_that_crashes_is_a_tool_error_with_its_stderr_and_the_run_goes_on() {
    let (setup, ran, _) = one_call("crash").await;
    assert_eq!(ran.outcome.stop_reason, StopReason::Completed);
    assert_eq!(ran.outcome.final_text, "went on");
    let (_, output, is_error) = &ran.tool_results()[0];
    assert!(*is_error);
    assert!(
        output.contains("has exited (exit code 3)") && output.contains("crashing on purpose"),
        "{output}"
    );
    assert_nothing_left(&setup);
}

#[tokio::test]
async fn servers_that_hang_flood_or_answer_garbage_end_as_tool_errors_within_their_timeout() {
    for mode in ["hang", "flood", "garbage"] {
        let (setup, ran, took) = one_call(mode).await;
        assert_eq!(ran.outcome.stop_reason, StopReason::Completed, "{mode}");
        let (_, output, is_error) = &ran.tool_results()[0];
        assert!(*is_error, "{mode}: {output}");
        assert!(
            output.contains("did not answer within 1 s") || output.contains("has exited"),
            "{mode}: {output}"
        );
        // The call's 1 s, and the stop: 1 s for the end of input, then
        // SIGTERM with its 1 s grace.
        assert!(took < Duration::from_secs(8), "{mode} took {took:?}");
        assert_nothing_left(&setup);
    }
}

#[tokio::test]
async fn a_server_that_does_not_start_offers_nothing_and_the_run_goes_on() {
    for (mode, says) in [
        ("exit", "cannot start, missing config"),
        ("mute", "did not answer the MCP handshake"),
    ] {
        let mut setup = setup(mode);
        setup.spec.mcp_servers[0].startup_timeout_ms = 1_000;
        let ran = run(&setup.spec, vec![text("fine without it")], None).await;
        assert_eq!(ran.outcome.stop_reason, StopReason::Completed, "{mode}");
        assert_eq!(offered(&ran), ["echo", "fail"], "{mode}");
        let logs = logs(&ran);
        assert!(
            logs.iter().any(|(level, m)| *level == LogLevel::Warn
                && m.starts_with("the MCP server `fx` did not start")
                && m.contains(says)),
            "{mode}: {logs:?}"
        );
        assert_nothing_left(&setup);
    }
}

#[tokio::test]
async fn a_run_cancelled_while_its_server_starts_leaves_no_server() {
    // One that outlives the end of its input: only a kill stops it.
    let setup = setup("deaf");
    let cancel = CancellationToken::new();
    let cancelling = cancel.clone();
    let marker = setup.marker.clone();
    tokio::spawn(async move {
        // Cancel once the server is running and waiting for nothing.
        while survivors(&marker).is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        cancelling.cancel();
    });
    let ran = run_with(
        &setup.spec,
        vec![text("never asked")],
        test_tools(),
        None,
        cancel,
    )
    .await;
    assert_eq!(ran.outcome.stop_reason, StopReason::Cancelled);
    assert!(ran.requests.is_empty(), "no model turn after the cancel");
    // The kill is asynchronous (SIGKILL, then the reaper).
    let deadline = Instant::now() + Duration::from_secs(10);
    while !survivors(&setup.marker).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_nothing_left(&setup);
}
