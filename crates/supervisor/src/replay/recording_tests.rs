use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_protocol::session::LifecycleStatus;

use super::*;
use crate::session::read::parse_session;

const TS: &str = "2026-11-22T12:00:00.000Z";

/// A header line as an older writer wrote it: no `tools` and none of the
/// other fields a replay reads.
fn old_header() -> Value {
    json!({
        "type": "session", "timestamp": TS, "version": 1, "runId": "a1b2c3d4",
        "agent": "general", "task": "count the files", "model": "m",
        "provider": "anthropic", "cwd": "ws", "depth": 1,
        "limits": subagent_protocol::Limits::default(),
        "sandbox": {"applied": [], "notApplied": []},
    })
}

fn new_header() -> Value {
    let mut h = old_header();
    h["tools"] = json!(["bash_read", "bash_find"]);
    h["maxTurns"] = json!(7);
    h
}

fn line(ty: &str, fields: Value) -> Value {
    let mut v = fields;
    v["type"] = json!(ty);
    v["timestamp"] = json!(TS);
    v
}

/// A two-turn run: a bash_read call and its result, then a final text.
fn two_turn_lines(header: Value) -> Vec<Value> {
    vec![
        header,
        line(
            "agent_event",
            json!({"eventType": "subagent:start", "jobId": "a1b2c3d4",
            "requestedBy": "me", "agentName": "general", "mode": "single",
            "startedAt": TS, "model": "m"}),
        ),
        line(
            "message",
            json!({"role": "user", "turn": 0, "text": "count the files"}),
        ),
        line(
            "message",
            json!({"role": "assistant", "turn": 1, "text": "", "stopReason": "tool_calls"}),
        ),
        line(
            "usage",
            json!({"turn": 1, "usage": {"input": 20, "output": 5, "cacheRead": 3,
            "cacheWrite": 0, "cost": 0.0, "turns": 1}}),
        ),
        line(
            "tool_call",
            json!({"turn": 1, "callId": "call_read", "name": "bash_read",
            "args": {"path": "notes.txt"}}),
        ),
        line(
            "tool_result",
            json!({"callId": "call_read", "name": "bash_read",
            "output": "1\talpha", "isError": false}),
        ),
        line(
            "message",
            json!({"role": "assistant", "turn": 2, "text": "Done.", "stopReason": "stop"}),
        ),
        line(
            "usage",
            json!({"turn": 2, "usage": {"input": 30, "output": 2, "cacheRead": 0,
            "cacheWrite": 0, "cost": 0.0, "turns": 1}}),
        ),
        line(
            "agent_event",
            json!({"eventType": "subagent:complete", "jobId": "a1b2c3d4",
            "requestedBy": "me", "agentName": "general", "mode": "single", "startedAt": TS,
            "completedAt": TS, "durationMs": 5, "model": "m", "status": "completed",
            "summary": "Done.", "usage": {"input": 50, "output": 7, "cacheRead": 3, "cacheWrite": 0, "cost": 0.0, "turns": 2}}),
        ),
    ]
}

fn text_of(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn parse(text: &str) -> Recording {
    Recording::from_items(&parse_session(text)).unwrap()
}

#[test]
fn turns_gather_their_calls_results_and_usage() {
    let rec = parse(&text_of(&two_turn_lines(new_header())));
    assert_eq!(
        rec.header.tools,
        Some(vec!["bash_read".to_owned(), "bash_find".to_owned()])
    );
    assert_eq!(rec.header.max_turns, Some(7));
    assert_eq!(rec.turns.len(), 2);
    let first = &rec.turns[0];
    assert_eq!((first.turn, first.stop_reason.as_str()), (1, "tool_calls"));
    assert_eq!(
        (
            first.usage.input,
            first.usage.cache_read,
            first.usage.output
        ),
        (20, 3, 5)
    );
    assert_eq!(first.tool_calls.len(), 1);
    assert_eq!(first.tool_calls[0].args, json!({"path": "notes.txt"}));
    assert_eq!(first.tool_results[0].output, "1\talpha");
    let second = &rec.turns[1];
    assert_eq!(
        (second.text.as_str(), second.tool_calls.len()),
        ("Done.", 0)
    );
    assert_eq!(rec.status, Some(LifecycleStatus::Completed));
    assert_eq!(rec.summary.as_deref(), Some("Done."));
    assert_eq!(rec.tool_call_count(), 1);
    assert!(rec.skipped.is_empty(), "{:?}", rec.skipped);
}

#[test]
fn a_torn_last_line_is_skipped_and_reported() {
    let mut lines = two_turn_lines(new_header());
    lines.pop();
    let mut text = text_of(&lines);
    text.push_str(r#"{"type":"message","timestamp":"2026-11-22T12:00:00.000Z","role":"assis"#);
    let rec = parse(&text);
    assert_eq!(rec.turns.len(), 2);
    assert_eq!(rec.status, None, "no ending line: interrupted");
    assert_eq!(rec.skipped.len(), 1);
    assert!(rec.skipped[0].contains("torn"), "{:?}", rec.skipped);
}

#[test]
fn an_old_header_without_tools_still_reads() {
    let rec = parse(&text_of(&two_turn_lines(old_header())));
    assert_eq!(rec.header.tools, None);
    assert_eq!(rec.header.max_turns, None);
    assert_eq!(rec.header.provider, "anthropic");
    assert_eq!(rec.turns.len(), 2);
}

#[test]
fn a_file_without_a_header_is_refused() {
    let mut lines = two_turn_lines(new_header());
    lines.remove(0);
    let err = Recording::from_items(&parse_session(&text_of(&lines))).unwrap_err();
    assert_eq!(err, RecordingError::NoHeader);
}

#[test]
fn lines_of_a_turn_without_its_message_are_not_given_to_another_turn() {
    let mut lines = two_turn_lines(new_header());
    // Drop the turn-2 message: its usage must not land on turn 1.
    lines.remove(7);
    let rec = parse(&text_of(&lines));
    assert_eq!(rec.turns.len(), 1);
    assert_eq!(rec.turns[0].usage.input, 20);
}
