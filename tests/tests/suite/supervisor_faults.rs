//! Workers that crash, lie, or break the protocol. Each must give the right
//! error code, a valid session file ending in a lifecycle line, and no
//! surviving process.

use pretty_assertions::assert_eq;

use super::support::*;

async fn run_mode(mode: &str) -> Outcome {
    let f = Fixture::new(mode);
    let mut r = f.request();
    r.limits.kill_grace_ms = 500;
    f.run(r).await
}

#[tokio::test]
async fn exiting_without_done_is_a_failure_with_a_short_diagnostic() {
    let o = run_mode("no-done").await;
    assert_eq!(o.code(), Some("SUBAGENT_FAILED"));
    assert_eq!(o.single()["exitCode"], 7);
    assert_eq!(o.termination(), "exited");
    let text = o.text();
    assert!(
        text.contains("exited with status 7 before reporting a result"),
        "{text}"
    );
    assert!(
        text.contains("I was about to say"),
        "partial text kept: {text}"
    );
    assert!(
        text.contains("fixture: exiting without Done"),
        "stderr tail: {text}"
    );
    assert!(text.len() < 4_000, "a diagnostic, not a dump");
}

#[tokio::test]
async fn sigabrt_is_reported_as_signaled() {
    let o = run_mode("abort").await;
    assert_eq!(o.code(), Some("SUBAGENT_FAILED"));
    assert_eq!(o.termination(), "signaled");
    assert_eq!(o.single()["termination"]["signal"], 6);
    assert_eq!(o.single()["exitCode"], 128 + 6);
    assert!(o.text().contains("SIGABRT"), "{}", o.text());
}

#[tokio::test]
async fn a_segfault_is_reported_as_signaled() {
    let o = run_mode("segfault").await;
    assert_eq!(o.code(), Some("SUBAGENT_FAILED"));
    assert_eq!(o.single()["termination"]["signal"], 11);
    assert!(o.text().contains("SIGSEGV"), "{}", o.text());
}

#[tokio::test]
async fn an_oversized_frame_is_a_protocol_violation() {
    let o = run_mode("oversized-frame").await;
    assert_eq!(o.code(), Some("SUBAGENT_FAILED"));
    let msg = o.json["details"]["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("broke the protocol") && msg.contains("exceeds"),
        "{msg}"
    );
    assert_eq!(o.single()["stopReason"], "protocol_error");
}

#[tokio::test]
async fn garbage_on_the_socket_is_a_protocol_violation() {
    let o = run_mode("garbage").await;
    assert_eq!(o.code(), Some("SUBAGENT_FAILED"));
    let msg = o.json["details"]["error"]["message"].as_str().unwrap();
    assert!(msg.contains("broke the protocol"), "{msg}");
}

#[tokio::test]
async fn a_frame_cut_in_half_then_exit_is_a_failure() {
    let o = run_mode("half-frame").await;
    assert_eq!(o.code(), Some("SUBAGENT_FAILED"));
    assert_eq!(o.termination(), "exited");
}

#[tokio::test]
async fn a_protocol_version_mismatch_is_refused_clearly() {
    let o = run_mode("bad-version").await;
    assert_eq!(o.code(), Some("SUBAGENT_FAILED"));
    let msg = o.json["details"]["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("protocol v999") && msg.contains("same build"),
        "{msg}"
    );
}

#[tokio::test]
async fn a_worker_error_in_done_keeps_its_code_and_partial_output() {
    let o = run_mode("budget").await;
    assert_eq!(o.code(), Some("SUBAGENT_BUDGET_EXCEEDED"));
    assert_eq!(o.text(), "partial answer");
    assert_eq!(o.single()["stopReason"], "max_turns");
    assert_ne!(o.single()["exitCode"], 0);
}

#[tokio::test]
async fn a_grandchild_that_calls_setsid_and_holds_the_pipes_is_found_and_killed() {
    let o = run_mode("setsid-grandchild").await;
    // The answer stands; the leak is recorded and the leaked process is dead.
    assert_eq!(o.code(), None, "{:#}", o.json);
    assert_eq!(o.termination(), "leaked");
    assert!(
        !o.single()["termination"]["leakedPids"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(
        o.lines_of("limit")
            .iter()
            .any(|l| l["limit"] == "leaked_processes")
    );
}

#[tokio::test]
async fn a_double_forked_daemon_is_found_and_killed() {
    let o = run_mode("daemon").await;
    assert_eq!(o.code(), None, "{:#}", o.json);
    assert_eq!(o.termination(), "leaked");
}
