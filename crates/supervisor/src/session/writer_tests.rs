use subagent_protocol::message::LogLevel;
use subagent_protocol::session::{LogLine, LogSource, SessionEntry, SessionLine};

use super::*;

fn log(message: &str) -> SessionLine {
    SessionLine::now(SessionEntry::Log(LogLine {
        level: LogLevel::Info,
        source: LogSource::Supervisor,
        message: message.into(),
    }))
}

#[tokio::test]
async fn every_line_is_one_json_object_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/run.jsonl");
    let writer = SessionWriter::create(&path).unwrap();
    for i in 0..100 {
        writer
            .append(log(&format!("line {i}\nwith newline")))
            .await
            .unwrap();
    }
    assert_eq!(writer.close().await.unwrap(), 100);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 100);
    for (i, l) in lines.iter().enumerate() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["type"], "log");
        assert_eq!(v["message"], format!("line {i}\nwith newline"));
    }
}

#[tokio::test]
async fn an_existing_session_file_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    std::fs::write(&path, "keep me\n").unwrap();
    let err = SessionWriter::create(&path).unwrap_err();
    assert!(matches!(err, SessionWriterError::Create { .. }), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep me\n");
}

#[test]
fn parent_lines_are_appended_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let parent = dir.path().join("parent.jsonl");
    std::fs::write(&parent, "{\"type\":\"x\"}\n").unwrap();
    append_to_parent_blocking(&parent, &log("child started")).unwrap();
    let text = std::fs::read_to_string(&parent).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(text.lines().nth(1).unwrap().contains("child started"));
}

#[test]
fn a_missing_parent_file_is_an_error_not_a_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let parent = dir.path().join("nope.jsonl");
    assert!(append_to_parent_blocking(&parent, &log("x")).is_err());
    assert!(!parent.exists());
}

#[tokio::test]
async fn parent_lines_are_appended_off_the_runtime_threads() {
    let dir = tempfile::tempdir().unwrap();
    let parent = dir.path().join("parent.jsonl");
    std::fs::write(&parent, "").unwrap();
    append_to_parent(&parent, &log("child started"))
        .await
        .unwrap();
    let text = std::fs::read_to_string(&parent).unwrap();
    assert!(text.contains("child started"), "{text}");
}

#[tokio::test]
async fn the_closing_line_comes_after_every_queued_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let writer = SessionWriter::create(&path).unwrap();
    for i in 0..50 {
        writer.append(log(&format!("line {i}"))).await.unwrap();
    }
    assert_eq!(writer.close_with(log("the end")).await.unwrap(), 51);
    let text = std::fs::read_to_string(&path).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["message"], "the end");
}

#[test]
fn a_session_file_is_written_and_closed_without_an_async_runtime() {
    // What a Drop needs: no runtime to spawn on, nothing to await.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let writer = SessionWriter::create(&path).unwrap();
    assert_eq!(writer.finish_blocking(log("the end")).unwrap(), 1);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 1);
    assert!(text.ends_with("\n"));
}

#[tokio::test]
async fn a_closing_line_handed_over_is_written_even_if_the_close_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let writer = SessionWriter::create(&path).unwrap();
    writer.append(log("first")).await.unwrap();
    drop(writer.close_with(log("the end")));
    // The writer thread finishes on its own; wait for the file to say so.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(&path).unwrap();
        if text.lines().count() == 2 {
            assert!(text.lines().last().unwrap().contains("the end"));
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{text}");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}
