//! Timeouts, cancellation, floods and resource caps.

use std::time::Duration;

use pretty_assertions::assert_eq;
use subagent_supervisor::{CANCEL_WINDOW, Supervisor};
use tokio_util::sync::CancellationToken;

use super::support::*;

#[tokio::test]
async fn the_wall_timeout_cancels_then_kills_the_group() {
    let f = Fixture::new("sleep");
    let mut r = f.request();
    r.limits.wall_timeout_ms = 300;
    r.limits.kill_grace_ms = 300;
    let o = f.run(r).await;
    assert_eq!(o.code(), Some("SUBAGENT_TIMEOUT"));
    assert_eq!(o.single()["stopReason"], "timeout");
    assert_eq!(o.termination(), "timeout");
    assert!(o.recorded_limit("wall_timeout"));
}

#[tokio::test]
async fn a_worker_that_ignores_sigterm_is_killed_after_the_grace() {
    let f = Fixture::new("ignore-term");
    let mut r = f.request();
    r.limits.wall_timeout_ms = 200;
    r.limits.kill_grace_ms = 400;
    // Wall timeout, then Cancel and the cancel window, then SIGTERM (ignored)
    // and the grace, then SIGKILL: the run cannot end sooner.
    let kill_at = Duration::from_millis(r.limits.wall_timeout_ms)
        + CANCEL_WINDOW
        + Duration::from_millis(r.limits.kill_grace_ms);
    // Spawning and reaping take well under this even on a loaded machine; a
    // second window or grace anywhere in the chain would not fit in it.
    let slack = Duration::from_millis(1_500);
    let o = f.run(r).await;
    assert_eq!(o.code(), Some("SUBAGENT_TIMEOUT"));
    assert_eq!(o.single()["termination"]["signal"], 9, "{:#}", o.single());
    assert!(
        o.elapsed >= kill_at && o.elapsed < kill_at + slack,
        "ended after {:?}; SIGKILL is due at {kill_at:?} (wall + cancel window + grace)",
        o.elapsed
    );
}

#[tokio::test]
async fn the_idle_timeout_fires_when_nothing_progresses() {
    let f = Fixture::new("sleep");
    let mut r = f.request();
    r.limits.idle_timeout_ms = 300;
    r.limits.kill_grace_ms = 300;
    let o = f.run(r).await;
    assert_eq!(o.code(), Some("SUBAGENT_TIMEOUT"));
    assert_eq!(o.single()["stopReason"], "idle_timeout");
    assert!(
        o.json["details"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("idle timeout")
    );
}

#[tokio::test]
async fn a_cancel_gets_the_workers_partial_output_and_an_aborted_lifecycle_line() {
    let f = Fixture::new("cancel-ok");
    // In place (no layer): the fixture's file must reach the workspace the
    // test watches, not the run's copy-on-write layer.
    let mut request = f.request();
    request.isolation = subagent_supervisor::layer::WorkspaceIsolation::None;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    // The fixture makes this file once its partial answer is out: cancel
    // then, not after a guessed delay (a slow first spawn used to let a
    // 300 ms cancel arrive before the worker's Start).
    let awaited = request
        .workspace_dir
        .join(subagent_tests::CANCEL_AWAITED_FILE);
    let seen = awaited.clone();
    tokio::spawn(async move {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while !awaited.exists() && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        trigger.cancel();
    });
    let o = f
        .run_with(Supervisor::new(f.config()), request, cancel)
        .await;
    assert!(
        seen.exists(),
        "the fixture's file never reached the workspace: the cancel came by the deadline"
    );
    assert_eq!(o.code(), Some("SUBAGENT_CANCELLED"));
    assert_eq!(o.text(), "half an answ");
    assert_eq!(
        o.termination(),
        "exited",
        "the worker exited by itself after Done"
    );
    let end = o.lines.last().unwrap();
    assert_eq!(end["eventType"], "subagent:aborted");
    assert_eq!(end["status"], "aborted");
}

#[tokio::test]
async fn a_stdout_flood_is_killed_at_the_hard_limit() {
    let f = Fixture::new("flood-stdout");
    let mut r = f.request();
    r.limits.stdout_bytes = 1 << 20;
    let o = f.run(r).await;
    assert_eq!(o.code(), Some("SUBAGENT_OUTPUT_TRUNCATED"));
    assert_eq!(o.termination(), "output_limit");
    let out = o.lines_of("output");
    let stdout = out
        .iter()
        .find(|l| l["stream"] == "stdout")
        .expect("stdout excerpt");
    // Head and tail of 64 KiB each are kept; the capture stops within one
    // read of the cap (asserted with a 64 KiB margin, not by timing).
    assert!(stdout["bytesKept"].as_u64().unwrap() <= 128 * 1024);
    assert!(
        stdout["bytesSeen"].as_u64().unwrap() <= (1 << 20) + 64 * 1024,
        "{stdout}"
    );
    assert!(stdout["truncated"].as_bool().unwrap());
}

#[tokio::test]
async fn a_stderr_flood_is_killed_at_the_hard_limit() {
    let f = Fixture::new("flood-stderr");
    let o = f.run(f.request()).await; // default 1 MiB stderr cap
    assert_eq!(o.code(), Some("SUBAGENT_OUTPUT_TRUNCATED"));
    assert_eq!(o.termination(), "output_limit");
    let out = o.lines_of("output");
    let stderr = out
        .iter()
        .find(|l| l["stream"] == "stderr")
        .expect("stderr excerpt");
    assert!(
        stderr["bytesSeen"].as_u64().unwrap() <= (1 << 20) + 64 * 1024,
        "{stderr}"
    );
}

#[tokio::test]
async fn a_protocol_flood_is_stopped_at_the_protocol_cap() {
    let f = Fixture::new("flood-protocol");
    let mut r = f.request();
    r.limits.protocol_bytes = 8 << 20;
    let o = f.run(r).await;
    assert_eq!(o.code(), Some("SUBAGENT_OUTPUT_TRUNCATED"));
    assert!(o.recorded_limit("protocol_bytes"));
}

#[tokio::test]
async fn a_file_past_the_size_cap_kills_the_writer() {
    let f = Fixture::new("big-file");
    let mut r = f.request();
    r.limits.file_size_bytes = 1 << 20;
    let o = f.run(r).await;
    assert_eq!(o.code(), Some("SUBAGENT_FAILED"));
    assert_eq!(
        o.single()["termination"]["signal"],
        25,
        "SIGXFSZ: {:#}",
        o.single()
    );
}

#[tokio::test]
async fn memory_past_the_cap_is_killed_and_reported() {
    if !cgroups_or_skip("memory_past_the_cap_is_killed_and_reported") {
        return;
    }
    let f = Fixture::new("memory");
    let mut r = f.request();
    r.limits.memory_bytes = 128 << 20;
    let o = f.run(r).await;
    assert_eq!(o.code(), Some("SUBAGENT_FAILED"));
    assert_eq!(o.termination(), "memory_limit");
    assert!(
        o.json["details"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("memory limit")
    );
}

#[tokio::test]
async fn a_fork_bomb_is_contained_by_the_pids_cap_and_fully_reaped() {
    if !cgroups_or_skip("a_fork_bomb_is_contained_by_the_pids_cap_and_fully_reaped") {
        return;
    }
    let f = Fixture::new("fork-bomb");
    let mut r = f.request();
    r.limits.pids = 32;
    let o = f.run(r).await;
    assert_eq!(o.code(), Some("SUBAGENT_FAILED"));
    assert_eq!(o.termination(), "pids_limit");
}
