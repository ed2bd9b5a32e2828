use super::*;
use crate::read::{is_terminal, parse_session};

const FULL: &str = concat!(
    r#"{"type":"log","level":"info","source":"supervisor","message":"started","timestamp":"2026-11-22T12:00:00.000Z"}"#,
    "\n",
    r#"{"type":"agent_event","eventType":"subagent:complete","jobId":"r1","requestedBy":"u","agentName":"general","mode":"single","startedAt":"2026-11-22T12:00:00.000Z","completedAt":"2026-11-22T12:00:01.000Z","durationMs":1000,"model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"cost":0.0,"turns":0},"status":"completed","timestamp":"2026-11-22T12:00:01.000Z"}"#,
    "\n",
);

#[test]
fn a_tail_holds_a_partial_line_until_its_newline() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    let (first, _) = FULL.split_at(FULL.len() / 2 + 40);
    std::fs::write(&path, first).unwrap();
    let mut tail = SessionTail::new(&path);
    let mut items = tail.poll().unwrap();
    assert_eq!(items.len(), 1);
    assert!(items.iter().all(|i| matches!(i, ReadItem::Line(_))));
    std::fs::write(&path, FULL).unwrap();
    items.extend(tail.poll().unwrap());
    assert_eq!(items, parse_session(FULL));
    assert!(is_terminal(items.last().unwrap()));
    assert_eq!(tail.finish(), None);
}

#[test]
fn a_tail_refuses_a_file_swapped_in_under_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    std::fs::write(&path, "{\"type\":\"log\",\"timestamp\":\"t\"}\n").unwrap();
    let mut tail = SessionTail::new(&path);
    assert_eq!(tail.poll().unwrap().len(), 1);
    let other = dir.path().join("other");
    std::fs::write(&other, "{\"type\":\"log\",\"timestamp\":\"t\"}\n").unwrap();
    std::fs::rename(&other, &path).unwrap();
    assert!(matches!(tail.poll(), Err(ReadError::Replaced { .. })));
}

#[test]
fn a_tail_of_a_fifo_fails_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let mut tail = SessionTail::new(&path);
    assert!(matches!(tail.poll(), Err(ReadError::Untrusted(_))));
}
