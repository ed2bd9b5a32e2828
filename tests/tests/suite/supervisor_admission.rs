//! What the supervisor refuses or reports before a worker can run: a task
//! too large for the protocol's frames, and a session file that cannot be
//! created.

use std::time::Duration;

use super::support::*;

#[tokio::test]
async fn a_task_too_large_for_a_frame_is_refused_at_once_with_its_size() {
    let f = Fixture::new("success");
    let mut request = f.request();
    request.task = "x".repeat(17 * 1024 * 1024);
    let out = f.run(request).await;
    assert_eq!(out.code(), Some("INVALID_INPUT"), "{:#}", out.json);
    let message = out.json["details"]["error"]["message"].as_str().unwrap();
    assert!(message.contains("too large"), "{message}");
    assert!(out.elapsed < Duration::from_secs(10), "{:?}", out.elapsed);
    assert!(
        !f.sessions_dir().exists(),
        "nothing is created for a refused task"
    );
}

#[tokio::test]
async fn a_session_file_that_cannot_be_created_is_not_reported() {
    let f = Fixture::new("success");
    // The sessions dir sits below a regular file: it cannot be created,
    // whoever runs the test.
    let blocker = f.dir.path().join("not-a-dir");
    std::fs::write(&blocker, "").unwrap();
    let mut config = f.config();
    config.sessions_dir = blocker.join("sessions");
    let out = f
        .run_with(
            subagent_supervisor::Supervisor::new(config),
            f.request(),
            tokio_util::sync::CancellationToken::new(),
        )
        .await;
    // The run's record cannot be kept: a machine fault, not the task's.
    assert_eq!(out.code(), Some("SUBAGENT_SESSION_LOST"), "{:#}", out.json);
    assert!(
        out.single().get("sessionFile").is_none(),
        "a session file that does not exist must not be reported: {:#}",
        out.json
    );
    let message = out.json["details"]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("the session file was lost: create session file"),
        "{message}"
    );
    assert!(message.contains("Not a directory"), "{message}");
}
