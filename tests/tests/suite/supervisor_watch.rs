//! The watch loop under workers that misbehave at its edges: one that stops
//! reading, one that sends a frame past the protocol cap, a run dropped by
//! its caller, and a cancel that arrives after the result is in.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::Value;
use subagent_supervisor::{CANCEL_WINDOW, Supervisor};
use tokio_util::sync::CancellationToken;

use super::support::*;

/// Longest a poll below waits for something the run is about to do.
const EVENT_WAIT: Duration = Duration::from_secs(20);

/// Polls `probe` until it returns `Some`, up to [`EVENT_WAIT`].
async fn wait_for<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + EVENT_WAIT;
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The one session file under `dir` whose text contains `needle`.
fn session_file_containing(dir: &Path, needle: &str) -> Option<PathBuf> {
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).ok()?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl")
                && std::fs::read_to_string(&path).is_ok_and(|t| t.contains(needle))
            {
                return Some(path);
            }
        }
    }
    None
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap()
}

#[tokio::test]
async fn a_worker_that_stops_reading_cannot_hold_off_the_wall_timeout() {
    let f = Fixture::new("deaf");
    let mut r = f.request();
    // A Start far larger than a socket buffer: it can never be written whole.
    r.task = format!("fixture task {}", "x".repeat(4 << 20));
    r.limits.wall_timeout_ms = 300;
    r.limits.kill_grace_ms = 300;
    // Wall timeout, the cancel window, SIGTERM (the fixture dies of it).
    let expected = r.limits.wall_timeout_ms + ms(CANCEL_WINDOW);
    let bound = Duration::from_millis(expected + r.limits.kill_grace_ms + 10_000);
    let o = tokio::time::timeout(bound, f.run(r))
        .await
        .expect("the run ended: a blocked write held off every timeout");
    assert_eq!(o.code(), Some("SUBAGENT_TIMEOUT"));
    assert_eq!(o.single()["stopReason"], "timeout");
    assert!(
        o.elapsed >= Duration::from_millis(expected),
        "{:?}",
        o.elapsed
    );
}

#[tokio::test]
async fn a_frame_past_the_protocol_cap_is_not_read_whole() {
    let f = Fixture::new("one-big-frame");
    let mut r = f.request();
    r.limits.protocol_bytes = 1 << 20;
    let o = f.run(r).await;
    assert_eq!(o.code(), Some("SUBAGENT_OUTPUT_TRUNCATED"));
    assert!(o.recorded_limit("protocol_bytes"));
    // The fixture writes this file once its 12 MiB frame is written whole;
    // a supervisor that stops reading at the 1 MiB cap never lets it.
    assert!(
        !f.dir.path().join("frame-sent").exists(),
        "the supervisor read a 12 MiB frame past its 1 MiB protocol cap"
    );
}

#[tokio::test]
async fn dropping_a_run_kills_the_worker_and_ends_the_session_file() {
    let f = Fixture::new("sleep");
    let supervisor = Supervisor::new(f.config());
    let mut run = Box::pin(supervisor.run(f.request(), CancellationToken::new()));
    let sessions = f.sessions_dir();
    // Drop the run once its worker is running (as a caller's own timeout
    // around `run` would), not after a guessed delay.
    let session = tokio::select! {
        result = &mut run => panic!("a sleeping worker finished: {result:?}"),
        path = wait_for("the start line", || session_file_containing(&sessions, "subagent:start")) => path,
    };
    drop(run);

    // Written before the drop returned: no waiting here.
    let lines = check_session_file(&session);
    let last = lines.last().unwrap();
    assert_eq!(last["eventType"], "subagent:aborted", "{last}");
    assert_eq!(last["status"], "aborted", "{last}");

    // The kill is sent by the drop; dying and being reaped take a moment.
    wait_for("the tree to be gone", || {
        (survivors(&f.marker).is_empty() && unreaped_leader(&lines).is_none()).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_cancel_after_done_leaves_the_result_as_it_was() {
    let f = Fixture::new("done-then-linger");
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let sessions = f.sessions_dir();
    // The fixture logs a line after Done; once it is in the session file the
    // supervisor has read Done.
    tokio::spawn(async move {
        wait_for("the line after Done", || {
            session_file_containing(&sessions, "lingering until Cancel")
        })
        .await;
        trigger.cancel();
    });
    let o = f
        .run_with(Supervisor::new(f.config()), f.request(), cancel)
        .await;
    assert_eq!(o.code(), None, "{:#}", o.json);
    assert_eq!(o.single()["stopReason"], "completed");
    assert_eq!(o.text(), "done, lingering");
    let end: &Value = o.lines.last().unwrap();
    assert_eq!(end["eventType"], "subagent:complete");
    assert!(
        o.lines_of("log")
            .iter()
            .any(|l| l["message"] == "lingering until Cancel"),
        "the cancel came after Done was read"
    );
}
