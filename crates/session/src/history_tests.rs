use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_protocol::Limits;
use subagent_protocol::session::{
    AgentEvent, LifecycleEvent, LifecycleStatus, ResumedFrom, RunMode, SandboxStatus, SessionLine,
    UsageLine,
};
use subagent_protocol::{HistoryMessage, HistoryToolCall, Usage};

use super::*;

/// A line as the writer writes it: one JSON object and its newline.
fn line(entry: SessionEntry) -> String {
    let mut text = serde_json::to_string(&SessionLine::now(entry)).unwrap();
    text.push('\n');
    text
}

/// `text` chained as the writer chains it (the unit tests' fixed key).
fn sealed(text: &str) -> String {
    crate::chain::reseal(&crate::key::SessionKey::fixed(7), text).unwrap()
}

fn header_of(run_id: &str, resumed_from: Option<ResumedFrom>) -> SessionHeader {
    SessionHeader {
        version: SESSION_FORMAT_VERSION,
        run_id: run_id.into(),
        agent: "general".into(),
        task: "count the files".into(),
        model: "m".into(),
        provider: "openai-chat".into(),
        cwd: "/w".into(),
        depth: 1,
        limits: Limits::default(),
        sandbox: SandboxStatus::default(),
        tool_sandbox: None,
        parent_session: None,
        tools: Some(vec!["bash_find".into(), "bash_read".into()]),
        output_schema: None,
        output_mode: None,
        max_turns: None,
        max_cost: None,
        python: None,
        resumed_from,
        batch_task: None,
    }
}

fn header(run_id: &str) -> String {
    line(SessionEntry::Session(header_of(run_id, None)))
}

fn message(role: Role, turn: u32, text: &str) -> String {
    line(SessionEntry::Message(MessageLine {
        role,
        turn,
        text: text.into(),
        stop_reason: (role == Role::Assistant).then(|| "stop".to_owned()),
        response_id: None,
    }))
}

fn call(turn: u32, id: &str, name: &str, args: serde_json::Value) -> String {
    line(SessionEntry::ToolCall(ToolCallLine {
        turn,
        call_id: id.into(),
        name: name.into(),
        args,
    }))
}

fn result(id: &str, name: &str, output: &str) -> String {
    line(SessionEntry::ToolResult(ToolResultLine {
        call_id: id.into(),
        name: name.into(),
        output: output.into(),
        is_error: false,
    }))
}

fn usage(turn: u32) -> String {
    line(SessionEntry::Usage(UsageLine {
        turn,
        usage: Usage {
            input: 10,
            output: 2,
            turns: 1,
            ..Usage::default()
        },
    }))
}

fn ending(job_id: &str, kind: LifecycleEvent, status: LifecycleStatus) -> String {
    line(SessionEntry::AgentEvent(AgentEvent {
        event_type: kind,
        job_id: job_id.into(),
        requested_by: "me".into(),
        agent_name: "general".into(),
        mode: RunMode::Single,
        pid: Some(7),
        started_at: "2026-11-22T12:00:00.000Z".into(),
        completed_at: Some("2026-11-22T12:00:01.500Z".into()),
        duration_ms: Some(1_500),
        model: "m".into(),
        usage: Some(Usage::default()),
        status: Some(status),
        summary: None,
        session_file: None,
        error: None,
        stop_reason: None,
    }))
}

/// Header, prompt, task, one turn with two calls and their results, a
/// final answer: what a finished run with tools leaves.
fn finished_run() -> String {
    [
        header("r1"),
        message(Role::System, 0, "You are terse."),
        message(Role::User, 0, "count the files"),
        message(Role::Assistant, 1, "Looking."),
        usage(1),
        call(1, "c1", "bash_find", json!({"pattern": "*.rs"})),
        call(1, "c2", "bash_read", json!({"path": "a.rs"})),
        result("c1", "bash_find", "a.rs\nb.rs"),
        result("c2", "bash_read", "1 fn main() {}"),
        message(Role::Assistant, 2, "Two files."),
        usage(2),
        ending("r1", LifecycleEvent::Complete, LifecycleStatus::Completed),
    ]
    .concat()
}

fn tool_call(id: &str, name: &str, args: &str) -> HistoryToolCall {
    HistoryToolCall {
        id: id.into(),
        name: name.into(),
        arguments_json: args.into(),
    }
}

fn tool_result(id: &str, name: &str, output: &str, is_error: bool) -> HistoryMessage {
    HistoryMessage::ToolResult {
        call_id: id.into(),
        name: name.into(),
        output: output.into(),
        is_error,
    }
}

fn user(text: &str) -> HistoryMessage {
    HistoryMessage::User { text: text.into() }
}

fn assistant(text: &str, tool_calls: Vec<HistoryToolCall>) -> HistoryMessage {
    HistoryMessage::Assistant {
        text: text.into(),
        tool_calls,
    }
}

fn read(text: &str) -> Result<Continuation, HistoryError> {
    file_history(Path::new("s.jsonl"), text)
}

#[test]
fn a_finished_run_is_read_back_as_its_conversation() {
    let c = read(&finished_run()).unwrap();
    assert_eq!(c.system_prompt, "You are terse.");
    assert_eq!(
        c.history,
        vec![
            user("count the files"),
            assistant(
                "Looking.",
                vec![
                    tool_call("c1", "bash_find", r#"{"pattern":"*.rs"}"#),
                    tool_call("c2", "bash_read", r#"{"path":"a.rs"}"#),
                ]
            ),
            tool_result("c1", "bash_find", "a.rs\nb.rs", false),
            tool_result("c2", "bash_read", "1 fn main() {}", false),
            assistant("Two files.", vec![]),
        ]
    );
    assert_eq!(c.turns, 2);
    assert_eq!(c.ending, SessionStatus::Completed);
    assert!(c.ends_with_answer());
    assert_eq!(
        c.called_tools.into_iter().collect::<Vec<_>>(),
        vec!["bash_find", "bash_read"]
    );
    assert!(c.notes.is_empty(), "{:?}", c.notes);
}

#[test]
fn a_call_cut_off_by_a_crash_gets_a_not_run_result_and_the_run_counts_as_interrupted() {
    // The supervisor died while c2 ran: c1 has its result, c2 none, no ending.
    let text = [
        header("r1"),
        message(Role::User, 0, "count the files"),
        message(Role::Assistant, 1, ""),
        call(1, "c1", "bash_find", json!({"pattern": "*"})),
        call(1, "c2", "bash_read", json!({"path": "a.rs"})),
        result("c1", "bash_find", "a.rs"),
    ]
    .concat();
    let c = read(&text).unwrap();
    assert_eq!(c.ending, SessionStatus::Interrupted);
    assert_eq!(c.turns, 1);
    assert_eq!(
        &c.history[2..],
        &[
            tool_result("c1", "bash_find", "a.rs", false),
            tool_result("c2", "bash_read", NOT_RUN_OUTPUT, true),
        ]
    );
    assert!(!c.ends_with_answer());
    assert_eq!(c.notes.len(), 1, "{:?}", c.notes);
}

#[test]
fn the_torn_last_line_a_crash_leaves_is_dropped() {
    let whole = [
        header("r1"),
        message(Role::User, 0, "count the files"),
        message(Role::Assistant, 1, "Looking."),
        call(1, "c1", "bash_find", json!({"pattern": "*"})),
    ]
    .concat();
    let torn_result = result("c1", "bash_find", "a.rs");
    for cut in [3, 20, torn_result.len() - 2] {
        let text = format!("{whole}{}", &torn_result[..cut]);
        let c = read(&text).unwrap();
        // The result never fully arrived: the call counts as not run.
        assert_eq!(
            c.history.last(),
            Some(&tool_result("c1", "bash_find", NOT_RUN_OUTPUT, true)),
            "cut at {cut}"
        );
        assert!(c.notes.iter().any(|n| n.contains("torn")), "{:?}", c.notes);
    }
}

#[test]
fn a_last_line_without_newline_that_no_writer_wrote_is_refused() {
    let text = format!("{}{}", finished_run(), "I changed this");
    let err = read(&text).unwrap_err();
    assert!(
        matches!(err, HistoryError::Damaged { line_no: 13, .. }),
        "{err:?}"
    );
    let shown = err.to_string();
    assert!(
        shown.contains("line 13") && shown.contains("not a session line"),
        "{shown}"
    );
}

#[test]
fn a_hand_edited_line_is_refused_with_its_number() {
    let mut lines: Vec<String> = finished_run().lines().map(str::to_owned).collect();
    lines[3] = lines[3].replace("\"role\":\"assistant\"", "\"role\":\"robot\"");
    let err = read(&(lines.join("\n") + "\n")).unwrap_err();
    assert!(
        matches!(err, HistoryError::Damaged { line_no: 4, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("damaged or edited"), "{err}");
}

#[test]
fn a_line_type_of_a_newer_writer_is_refused() {
    let text = format!(
        "{}{}\n",
        finished_run(),
        r#"{"type":"hologram","timestamp":"2026-11-22T12:00:00.000Z"}"#
    );
    let err = read(&text).unwrap_err();
    assert!(err.to_string().contains("hologram"), "{err}");
}

#[test]
fn another_session_format_is_refused_naming_both_versions() {
    let mut old = header_of("r1", None);
    old.version = SESSION_FORMAT_VERSION + 1;
    let text = line(SessionEntry::Session(old)) + &message(Role::User, 0, "t");
    let err = read(&text).unwrap_err();
    let shown = err.to_string();
    assert!(matches!(err, HistoryError::Version { .. }), "{shown}");
    assert!(
        shown.contains(&format!("format {}", SESSION_FORMAT_VERSION + 1))
            && shown.contains(&format!("format {SESSION_FORMAT_VERSION}")),
        "{shown}"
    );
}

#[test]
fn a_file_without_header_is_refused() {
    let err = read(&message(Role::User, 0, "t")).unwrap_err();
    assert!(matches!(err, HistoryError::NoHeader { .. }), "{err:?}");
    let err = read("").unwrap_err();
    assert!(matches!(err, HistoryError::NoHeader { .. }), "{err:?}");
}

#[test]
fn a_result_for_a_call_never_made_is_refused() {
    let text = [
        header("r1"),
        message(Role::User, 0, "t"),
        message(Role::Assistant, 1, ""),
        result("ghost", "bash_find", "x"),
    ]
    .concat();
    let err = read(&text).unwrap_err();
    assert!(
        matches!(err, HistoryError::Damaged { line_no: 4, .. }),
        "{err:?}"
    );
}

#[test]
fn lifecycle_lines_of_nested_runs_do_not_end_this_one() {
    let text = [
        header("r1"),
        message(Role::User, 0, "t"),
        message(Role::Assistant, 1, "asking a helper"),
        ending(
            "child9",
            LifecycleEvent::Complete,
            LifecycleStatus::Completed,
        ),
    ]
    .concat();
    assert_eq!(read(&text).unwrap().ending, SessionStatus::Interrupted);
}

#[test]
fn arguments_the_model_wrote_as_invalid_json_go_back_as_written() {
    let text = [
        header("r1"),
        message(Role::User, 0, "t"),
        message(Role::Assistant, 1, ""),
        call(1, "c1", "bash_find", json!({"_raw": "{pattern: *"})),
        result("c1", "bash_find", "invalid arguments"),
    ]
    .concat();
    let c = read(&text).unwrap();
    assert_eq!(
        c.history[1],
        assistant("", vec![tool_call("c1", "bash_find", "{pattern: *")])
    );
}

#[test]
fn a_reminder_the_loop_sent_is_part_of_the_conversation() {
    let text = [
        header("r1"),
        message(Role::User, 0, "t"),
        message(Role::Assistant, 1, "done"),
        message(Role::User, 1, "Call report_back now."),
    ]
    .concat();
    let c = read(&text).unwrap();
    assert_eq!(c.history.last(), Some(&user("Call report_back now.")));
    assert!(!c.ends_with_answer());
}

#[test]
fn a_resumed_run_is_read_with_the_runs_it_continues() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("r1.jsonl");
    std::fs::write(&first, sealed(&finished_run())).unwrap();
    let from = ResumedFrom {
        run_id: "r1".into(),
        file: first.display().to_string(),
        turns: 2,
    };
    let second = dir.path().join("r2.jsonl");
    let text = [
        line(SessionEntry::Session(header_of("r2", Some(from)))),
        message(Role::System, 0, "You are terse."),
        message(Role::User, 0, "and the tests?"),
        message(Role::Assistant, 1, "None."),
        ending("r2", LifecycleEvent::Complete, LifecycleStatus::Completed),
    ]
    .concat();
    std::fs::write(&second, sealed(&text)).unwrap();
    let c = read_continuation(&second).unwrap();
    assert_eq!(c.turns, 3);
    assert_eq!(c.header.run_id, "r2");
    assert_eq!(c.file, second);
    assert_eq!(c.system_prompt, "You are terse.");
    assert_eq!(c.history.len(), 7);
    assert_eq!(
        &c.history[5..],
        &[user("and the tests?"), assistant("None.", vec![])]
    );

    // The run it continues is gone: refused, naming it.
    std::fs::remove_file(&first).unwrap();
    let err = read_continuation(&second).unwrap_err();
    let shown = err.to_string();
    assert!(matches!(err, HistoryError::Earlier { .. }), "{shown}");
    assert!(
        shown.contains("run r1") && shown.contains("r1.jsonl"),
        "{shown}"
    );
}

#[test]
fn a_circle_of_resumed_runs_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r1.jsonl");
    let from = ResumedFrom {
        run_id: "r1".into(),
        file: file.display().to_string(),
        turns: 0,
    };
    std::fs::write(
        &file,
        sealed(&line(SessionEntry::Session(header_of("r1", Some(from))))),
    )
    .unwrap();
    let err = read_continuation(&file).unwrap_err();
    assert!(err.to_string().contains("round in a circle"), "{err}");
}

#[test]
fn a_missing_file_is_refused_naming_it() {
    let err = read_continuation(Path::new("/nonexistent/r9.jsonl")).unwrap_err();
    assert!(matches!(err, HistoryError::Unverified(_)), "{err:?}");
    assert!(err.to_string().contains("/nonexistent/r9.jsonl"), "{err}");
}

#[test]
fn a_file_whose_chain_breaks_is_not_continued_and_the_line_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r1.jsonl");
    let good = sealed(&finished_run());
    // The task rewritten, as a tool with the sessions dir in reach would.
    std::fs::write(&file, good.replacen("count the files", "rm -rf ~", 1)).unwrap();
    let err = read_continuation(&file).unwrap_err();
    let shown = err.to_string();
    assert!(matches!(err, HistoryError::Unverified(_)), "{shown}");
    assert!(
        shown.contains("line 1 does not match its chain value"),
        "{shown}"
    );
    // And one written before files were chained.
    std::fs::write(&file, finished_run()).unwrap();
    let shown = read_continuation(&file).unwrap_err().to_string();
    assert!(shown.contains("line 1 carries no chain value"), "{shown}");
}
