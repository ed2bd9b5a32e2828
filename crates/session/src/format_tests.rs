use std::path::PathBuf;

use pretty_assertions::assert_eq;
use subagent_protocol::Usage;

use super::*;

fn summary(status: SessionStatus) -> SessionSummary {
    SessionSummary {
        run_id: "abc123".into(),
        agent: "general".into(),
        model: "m".into(),
        task: "Count the files\nin the workspace and then report back in detail please".into(),
        started_at: "2026-11-22T12:00:00.123Z".into(),
        status,
        duration_ms: Some(1_500),
        usage: Usage {
            input: 10,
            output: 5,
            cost: 0.0012,
            turns: 1,
            ..Usage::default()
        },
        error: None,
        stop_reason: None,
        session_file: PathBuf::from("f.jsonl"),
        torn: false,
    }
}

#[test]
fn durations_read_at_a_glance() {
    assert_eq!(format_duration(850), "850ms");
    assert_eq!(format_duration(12_345), "12.3s");
    assert_eq!(format_duration(245_000), "4m05s");
    assert_eq!(format_duration(3_720_000), "1h02m");
}

#[test]
fn the_task_head_is_one_line_and_cut_with_a_mark() {
    assert_eq!(head("a\nb", 40), "a b");
    let cut = head(&"x".repeat(50), TASK_HEAD_CHARS);
    assert_eq!(cut.chars().count(), TASK_HEAD_CHARS);
    assert!(cut.ends_with('…'));
}

#[test]
fn the_table_has_a_header_row_and_one_row_per_run_without_colour() {
    let table = format_table(&[summary(SessionStatus::Completed)], Style::default());
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].starts_with("START"), "{table}");
    assert!(
        lines[1].starts_with("2026-11-22 12:00:00  abc123  general  completed  1.5s"),
        "{table}"
    );
    assert!(lines[1].contains("10/5") && lines[1].contains("$0.0012"));
    assert!(!table.contains('\x1b'));
}

#[test]
fn colour_is_only_added_when_asked() {
    let s = summary(SessionStatus::Failed);
    assert!(
        format_closing(
            &s,
            Style {
                color: true,
                terminal: true
            }
        )
        .contains("\x1b[31mfailed")
    );
    assert!(
        !format_closing(
            &s,
            Style {
                color: false,
                terminal: false
            }
        )
        .contains('\x1b')
    );
}

#[test]
fn a_torn_line_is_explained() {
    let note = format_item(
        &ReadItem::Torn {
            line_no: 9,
            bytes: 12,
        },
        Style::default(),
    );
    assert!(note.contains("line 9 is torn"), "{note}");
}

#[test]
fn recorded_sequences_are_stripped_on_a_terminal_and_kept_on_a_pipe() {
    use subagent_protocol::session::{MessageLine, Role, SessionEntry, SessionLine, ToolCallLine};
    let evil = "\x1b]0;pwned\x07\x1b[2J\u{9b}31m";
    let lines = [
        SessionLine {
            entry: SessionEntry::Message(MessageLine {
                role: Role::Assistant,
                turn: 1,
                text: format!("answer{evil}"),
                stop_reason: None,
                response_id: None,
            }),
            timestamp: "2026-11-22T12:00:00.123Z".into(),
        },
        SessionLine {
            entry: SessionEntry::ToolCall(ToolCallLine {
                turn: 1,
                call_id: format!("c1{evil}"),
                name: format!("tool{evil}"),
                args: serde_json::Value::String(format!("{{{evil}")),
            }),
            timestamp: "2026-11-22T12:00:00.123Z".into(),
        },
    ];
    let terminal = Style {
        color: true,
        terminal: true,
    };
    for line in &lines {
        let shown = format_line(line, terminal);
        assert!(!shown.contains("pwned"), "{shown:?}");
        assert!(
            !shown.contains("\x1b]") && !shown.contains("\x1b[2J"),
            "{shown:?}"
        );
        assert!(!shown.contains('\u{9b}'), "{shown:?}");
        let piped = format_line(line, Style::default());
        assert!(piped.contains(evil), "a pipe gets the bytes: {piped:?}");
    }
    assert!(format_line(&lines[1], terminal).contains("tool [c1] {"));
}

fn budget_error() -> subagent_protocol::session::EndingError {
    subagent_protocol::session::EndingError {
        code: "SUBAGENT_BUDGET_EXCEEDED".into(),
        message: "the turn budget of 2 ran out; partial output is kept".into(),
        limit: Some(subagent_protocol::result::LimitReached::count(
            subagent_protocol::result::LimitName::MaxTurns,
            2,
        )),
    }
}

#[test]
fn a_failed_run_shows_its_code_in_the_table_and_its_reason_in_the_closing() {
    let mut s = summary(SessionStatus::Failed);
    s.error = Some(budget_error());
    s.stop_reason = Some("max_turns".into());
    let table = format_table(&[s.clone()], Style::default());
    assert!(table.contains("failed SUBAGENT_BUDGET_EXCEEDED"), "{table}");
    let closing = format_closing(&s, Style::default());
    assert!(
        closing.contains(
            "error  SUBAGENT_BUDGET_EXCEEDED: the turn budget of 2 ran out; partial output is kept"
        ),
        "{closing}"
    );
    assert!(closing.contains("limit  maxTurns = 2"), "{closing}");
}

#[test]
fn a_cut_answer_is_completed_with_a_note_and_cached_input_is_its_own_figure() {
    let mut s = summary(SessionStatus::Completed);
    s.stop_reason = Some("max_tokens".into());
    s.usage.cache_read = 93;
    let table = format_table(&[s.clone()], Style::default());
    assert!(table.contains("completed max_tokens"), "{table}");
    assert!(table.contains("10(+93)/5"), "{table}");
    let closing = format_closing(&s, Style::default());
    assert!(closing.contains("note"), "{closing}");
    assert!(closing.contains("max_tokens"), "{closing}");
    assert!(
        closing.contains("10 in / 5 out tokens (cache read 93"),
        "{closing}"
    );
}

#[test]
fn an_ending_line_shows_its_reason_and_an_assistant_message_its_cut() {
    use subagent_protocol::session::{
        AgentEvent, LifecycleEvent, LifecycleStatus, MessageLine, Role, RunMode, SessionEntry,
        SessionLine,
    };
    let ending = SessionLine {
        entry: SessionEntry::AgentEvent(AgentEvent {
            event_type: LifecycleEvent::Error,
            job_id: "r1".into(),
            requested_by: "me".into(),
            agent_name: "general".into(),
            mode: RunMode::Single,
            pid: None,
            started_at: "2026-11-22T12:00:00.000Z".into(),
            completed_at: None,
            duration_ms: Some(10),
            model: "m".into(),
            usage: None,
            status: Some(LifecycleStatus::Failed),
            summary: Some("Here is half an answer".into()),
            session_file: None,
            error: Some(budget_error()),
            stop_reason: Some("max_turns".into()),
        }),
        timestamp: "2026-11-22T12:00:00.123Z".into(),
    };
    let shown = format_line(&ending, Style::default());
    assert!(
        shown.contains("SUBAGENT_BUDGET_EXCEEDED: the turn budget"),
        "{shown}"
    );
    assert!(shown.contains("maxTurns = 2"), "{shown}");
    let cut = SessionLine {
        entry: SessionEntry::Message(MessageLine {
            role: Role::Assistant,
            turn: 1,
            text: "Once upon a".into(),
            stop_reason: Some("length".into()),
            response_id: None,
        }),
        timestamp: "2026-11-22T12:00:00.123Z".into(),
    };
    let shown = format_line(&cut, Style::default());
    assert!(shown.contains("stop length: cut by max_tokens"), "{shown}");
}
