//! The agent loop's plain paths: text-only turns, tool calls (unknown,
//! failing, bad arguments, capped output), provider errors, bad input.

use pretty_assertions::assert_eq;
use subagent_protocol::usage::ModelPrice;
use subagent_protocol::{ErrorCode, StopReason, Usage, WorkerEvent};
use subagent_worker::provider::{ChatMessage, ProviderError};

use super::loop_support::{calls, run, spec, text};

#[tokio::test]
async fn a_text_only_turn_completes_with_its_text() {
    let free = Some(ModelPrice::default());
    let ran = run(&spec(), vec![text("hello there")], free).await;
    assert_eq!(ran.outcome.stop_reason, StopReason::Completed);
    assert_eq!(ran.outcome.error, None);
    assert_eq!(ran.outcome.final_text, "hello there");
    assert_eq!(ran.outcome.structured_output_json, None);
    assert_eq!(ran.outcome.usage.turns, 1);
    assert_eq!(
        ran.events,
        vec![
            WorkerEvent::TurnStart { turn: 1 },
            WorkerEvent::TextDelta {
                text: "hello there".to_owned()
            },
            WorkerEvent::AssistantMessageEnd {
                turn: 1,
                text: "hello there".to_owned(),
                stop_reason: "stop".to_owned(),
                response_id: Some("scripted-response".to_owned()),
            },
            WorkerEvent::Usage {
                turn: 1,
                usage: Usage {
                    turns: 1,
                    ..Usage::default()
                },
            },
        ]
    );
    assert_eq!(ran.requests.len(), 1);
    assert_eq!(ran.requests[0].system_prompt, "You are a test.");
    assert_eq!(
        ran.requests[0].messages,
        vec![ChatMessage::User {
            text: "do the thing".to_owned()
        }]
    );
    let offered: Vec<&str> = ran.requests[0]
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(offered, vec!["echo", "fail"]);
    assert_eq!(ran.requests[0].native_schema, None);
}

#[tokio::test]
async fn an_unknown_tool_is_answered_with_the_available_ones_and_the_loop_goes_on() {
    let ran = run(
        &spec(),
        vec![calls("let me look", &[("grep", "{}")]), text("done")],
        None,
    )
    .await;
    assert_eq!(ran.outcome.stop_reason, StopReason::Completed);
    assert_eq!(ran.outcome.final_text, "done");
    assert_eq!(
        ran.tool_results(),
        vec![(
            "grep".to_owned(),
            "unknown tool `grep`; available tools: echo, fail".to_owned(),
            true
        )]
    );
    assert_eq!(
        ran.last_message_of(1),
        &ChatMessage::ToolResult {
            call_id: "call_0_grep".to_owned(),
            name: "grep".to_owned(),
            output: "unknown tool `grep`; available tools: echo, fail".to_owned(),
            is_error: true,
        }
    );
    assert!(ran.events.contains(&WorkerEvent::ToolCall {
        turn: 1,
        call_id: "call_0_grep".to_owned(),
        name: "grep".to_owned(),
        arguments_json: "{}".to_owned(),
    }));
}

#[tokio::test]
async fn a_failing_tool_gives_the_model_its_message() {
    let ran = run(
        &spec(),
        vec![calls("", &[("fail", "{}")]), text("gave up")],
        None,
    )
    .await;
    assert_eq!(
        ran.tool_results(),
        vec![(
            "fail".to_owned(),
            "tool `fail` failed: disk full".to_owned(),
            true
        )]
    );
    assert_eq!(ran.outcome.final_text, "gave up");
    assert_eq!(ran.outcome.error, None);
}

#[tokio::test]
async fn invalid_json_arguments_are_explained_to_the_model() {
    let ran = run(
        &spec(),
        vec![calls("", &[("echo", "{\"text\": ")]), text("ok")],
        None,
    )
    .await;
    let results = ran.tool_results();
    assert_eq!(results.len(), 1);
    assert!(results[0].2);
    assert!(
        results[0]
            .1
            .starts_with("invalid JSON arguments for tool `echo`: EOF while parsing"),
        "{}",
        results[0].1
    );
}

#[tokio::test]
async fn tool_output_is_capped_to_the_limits_of_the_task() {
    let mut spec = spec();
    spec.limits.tool_output_lines = 2;
    let ran = run(
        &spec,
        vec![
            calls("", &[("echo", r#"{"text": "1\n2\n3\n4\n5\n"}"#)]),
            text("ok"),
        ],
        None,
    )
    .await;
    assert_eq!(
        ran.tool_results(),
        vec![(
            "echo".to_owned(),
            "1\n[... 6 bytes / 3 lines omitted ...]\n5\n".to_owned(),
            false
        )]
    );
}

#[tokio::test]
async fn a_provider_error_fails_the_run_with_its_message_and_keeps_earlier_text() {
    let ran = run(
        &spec(),
        vec![
            calls("step one", &[("echo", r#"{"text": "x"}"#)]),
            super::loop_support::Turn::Fail(ProviderError::Connect {
                url: "http://127.0.0.1:9/v1/chat/completions".to_owned(),
                message: "connection refused".to_owned(),
            }),
        ],
        None,
    )
    .await;
    let error = ran.outcome.error.clone().expect("an error");
    assert_eq!(error.code, ErrorCode::SubagentFailed);
    assert!(
        error.message.contains(
            "model turn 2 failed: could not reach the provider at \
             http://127.0.0.1:9/v1/chat/completions: connection refused"
        ),
        "{}",
        error.message
    );
    assert_eq!(ran.outcome.stop_reason, StopReason::Error);
    assert_eq!(ran.outcome.final_text, "step one");
}

#[tokio::test]
async fn an_unknown_tool_in_the_subset_is_invalid_input_before_any_model_call() {
    let mut spec = spec();
    spec.tools.push("rm_rf".to_owned());
    let ran = run(&spec, vec![], None).await;
    let error = ran.outcome.error.clone().expect("an error");
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert!(
        error
            .message
            .contains("unknown tool `rm_rf`; known tools: `echo`, `fail`"),
        "{}",
        error.message
    );
    assert!(ran.requests.is_empty());
}

#[tokio::test]
async fn an_unknown_price_is_logged_once_and_counted_as_zero() {
    let turn = |t: &str| super::loop_support::Turn::Reply {
        text: t.to_owned(),
        calls: vec![],
        usage: Usage {
            input: 1_000,
            output: 10,
            ..Usage::default()
        },
    };
    let ran = run(&spec(), vec![turn("done")], None).await;
    let logs: Vec<&String> = ran
        .events
        .iter()
        .filter_map(|e| match e {
            WorkerEvent::Log { message, .. } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(logs.len(), 1);
    assert!(
        logs[0].starts_with("cost unknown for model test-model: counted as 0"),
        "{}",
        logs[0]
    );
    assert_eq!(ran.outcome.usage.cost, 0.0);
    assert_eq!(ran.outcome.usage.input, 1_000);
}
