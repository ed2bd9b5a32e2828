use std::fs::OpenOptions;
use std::sync::Barrier;

use subagent_protocol::message::LogLevel;
use subagent_protocol::session::{LogLine, LogSource, SessionEntry};

use super::*;
use crate::chain::verify;
use crate::key::session_key;
use crate::untrusted_file::open_append_existing;

fn log(message: &str) -> SessionLine {
    SessionLine::now(SessionEntry::Log(LogLine {
        level: LogLevel::Info,
        source: LogSource::Supervisor,
        message: message.into(),
    }))
}

fn append_once(path: &Path, message: &str) {
    let mut opened = open_append_existing(path).unwrap();
    FileChain::existing(opened.identity)
        .append(&mut opened.file, path, &log(message))
        .unwrap();
}

fn verified_lines(path: &Path) -> usize {
    let bytes = std::fs::read(path).unwrap();
    verify(session_key().unwrap(), &bytes).unwrap().lines
}

#[test]
fn appenders_that_take_turns_continue_the_chain_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("serve.jsonl");
    std::fs::write(&path, "").unwrap();
    for i in 0..5 {
        append_once(&path, &format!("line {i}"));
    }
    assert_eq!(verified_lines(&path), 5);
}

#[test]
fn appenders_of_one_file_at_once_never_chain_onto_the_same_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("serve.jsonl");
    std::fs::write(&path, "").unwrap();
    let barrier = Barrier::new(8);
    std::thread::scope(|s| {
        for t in 0..8 {
            let (path, barrier) = (&path, &barrier);
            s.spawn(move || {
                barrier.wait();
                for i in 0..20 {
                    append_once(path, &format!("thread {t} line {i}"));
                }
            });
        }
    });
    assert_eq!(verified_lines(&path), 160);
}

#[test]
fn a_torn_last_line_is_ended_and_covered_by_the_next_append() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    std::fs::write(&path, "").unwrap();
    append_once(&path, "first");
    let mut file = OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(br#"{"type":"log","mess"#).unwrap();
    drop(file);
    append_once(&path, "after the crash");
    let bytes = std::fs::read(&path).unwrap();
    let verified = verify(session_key().unwrap(), &bytes).unwrap();
    assert_eq!(verified.lines, 2);
    assert_eq!(verified.covered, vec![2]);
    assert_eq!(String::from_utf8(bytes).unwrap().lines().count(), 3);
}

#[test]
fn a_chain_no_one_holds_is_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    std::fs::write(&path, "").unwrap();
    append_once(&path, "x");
    let identity = open_append_existing(&path).unwrap().identity;
    let live = LIVE.lock().unwrap();
    assert!(live.get(&identity).is_none_or(|w| w.upgrade().is_none()));
}
