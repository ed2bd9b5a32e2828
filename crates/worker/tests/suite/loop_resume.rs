//! A resumed run: the recorded history comes first in the conversation,
//! the new task (if any) after it, and the budget counts the new turns only.

use pretty_assertions::assert_eq;
use subagent_protocol::{
    Budget, ErrorCode, HistoryMessage, HistoryToolCall, OutputMode, StopReason, WorkerEvent,
};
use subagent_worker::provider::{ChatMessage, ToolCallRequest};

use super::loop_support::{run, spec, text};

fn recorded() -> Vec<HistoryMessage> {
    vec![
        HistoryMessage::User {
            text: "count the files".into(),
        },
        HistoryMessage::Assistant {
            text: "Looking.".into(),
            tool_calls: vec![HistoryToolCall {
                id: "c1".into(),
                name: "echo".into(),
                arguments_json: r#"{"text":"a.rs"}"#.into(),
            }],
        },
        HistoryMessage::ToolResult {
            call_id: "c1".into(),
            name: "echo".into(),
            output: "a.rs".into(),
            is_error: false,
        },
        HistoryMessage::Assistant {
            text: "One file.".into(),
            tool_calls: vec![],
        },
    ]
}

fn recorded_as_chat() -> Vec<ChatMessage> {
    vec![
        ChatMessage::User {
            text: "count the files".into(),
        },
        ChatMessage::Assistant {
            text: "Looking.".into(),
            tool_calls: vec![ToolCallRequest {
                id: "c1".into(),
                name: "echo".into(),
                arguments_json: r#"{"text":"a.rs"}"#.into(),
            }],
        },
        ChatMessage::ToolResult {
            call_id: "c1".into(),
            name: "echo".into(),
            output: "a.rs".into(),
            is_error: false,
        },
        ChatMessage::Assistant {
            text: "One file.".into(),
            tool_calls: vec![],
        },
    ]
}

#[tokio::test]
async fn a_follow_up_is_sent_after_the_recorded_conversation() {
    let mut spec = spec();
    spec.history = recorded();
    spec.task = "and the tests?".into();
    let ran = run(&spec, vec![text("No tests.")], None).await;
    assert_eq!(ran.outcome.error, None);
    assert_eq!(ran.outcome.final_text, "No tests.");
    let mut expected = recorded_as_chat();
    expected.push(ChatMessage::User {
        text: "and the tests?".into(),
    });
    assert_eq!(ran.requests[0].messages, expected);
    // Turns are numbered and counted for the new run only.
    assert_eq!(ran.events[0], WorkerEvent::TurnStart { turn: 1 });
    assert_eq!(ran.outcome.usage.turns, 1);
}

#[tokio::test]
async fn an_interrupted_run_continues_from_its_history_without_a_new_message() {
    let mut spec = spec();
    spec.history = recorded()[..3].to_vec();
    spec.task = String::new();
    let ran = run(&spec, vec![text("One file.")], None).await;
    assert_eq!(ran.outcome.stop_reason, StopReason::Completed);
    assert_eq!(ran.requests[0].messages, recorded_as_chat()[..3].to_vec());
}

#[tokio::test]
async fn the_budget_counts_the_new_turns_only() {
    let mut spec = spec();
    spec.history = recorded();
    spec.task = "more".into();
    spec.budget = Budget {
        max_turns: 1,
        max_cost: None,
    };
    // One new turn is allowed although the history holds two.
    let ran = run(&spec, vec![text("done")], None).await;
    assert_eq!(ran.outcome.error, None);
    assert_eq!(ran.requests.len(), 1);
}

#[tokio::test]
async fn the_report_back_reminder_is_reported_so_the_session_file_keeps_it() {
    let mut spec = spec();
    spec.output_schema_json = Some(r#"{"type":"object"}"#.into());
    spec.output_mode = OutputMode::ReportBack;
    let ran = run(&spec, vec![text("forgot"), text("again")], None).await;
    let reminders: Vec<&WorkerEvent> = ran
        .events
        .iter()
        .filter(|e| matches!(e, WorkerEvent::UserMessage { .. }))
        .collect();
    assert_eq!(reminders.len(), 1, "{:?}", ran.events);
    let WorkerEvent::UserMessage { turn, text } = reminders[0] else {
        unreachable!()
    };
    assert_eq!(*turn, 1);
    // What was reported is exactly what the model was sent.
    assert_eq!(
        ran.requests[1].messages.last(),
        Some(&ChatMessage::User { text: text.clone() })
    );
    assert_eq!(
        ran.outcome.error.map(|e| e.code),
        Some(ErrorCode::SubagentStructuredOutputInvalid)
    );
}
