use std::time::Duration;

use pretty_assertions::assert_eq;
use subagent_protocol::{ErrorCode, FromWorker, Limits, SubagentReply, Usage};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::outbox::outbox;

#[test]
fn arguments_become_a_spawn_request_with_the_schema_as_json_text() {
    let request = spawn_request(
        "call_1",
        r#"{"agent":"explorer","task":"find it","outputSchema":{"type":"object"},"maxTurns":3,"maxCost":0.5}"#,
    )
    .unwrap();
    assert_eq!(
        request,
        SpawnRequest {
            call_id: "call_1".into(),
            agent: "explorer".into(),
            task: "find it".into(),
            output_schema_json: Some(r#"{"type":"object"}"#.into()),
            max_turns: Some(3),
            max_cost: Some(0.5),
            tools: None,
            limits_json: None,
        }
    );
}

#[test]
fn missing_task_unknown_fields_and_negative_cost_are_refused_with_advice() {
    for bad in [
        r#"{"agent":"general"}"#,
        r#"{"agent":"general","task":"x","budget":5}"#,
        r#"{"agent":"general","task":"x","maxCost":-1}"#,
        "not json",
    ] {
        let message = spawn_request("c", bad).unwrap_err();
        assert!(message.contains("`subagent`"), "{bad}: {message}");
    }
}

#[test]
fn the_reply_deadline_is_the_grandchilds_wall_timeout_not_the_tool_timeout() {
    let limits = Limits {
        wall_timeout_ms: 600_000,
        kill_grace_ms: 5_000,
        tool_timeout_ms: 60_000,
        ..Limits::default()
    };
    assert_eq!(reply_deadline(&limits), Duration::from_secs(600 + 5 + 30));
}

fn reply(call_id: String, is_error: bool, code: Option<ErrorCode>) -> SubagentReply {
    SubagentReply {
        call_id,
        is_error,
        output: "out".into(),
        usage: Usage {
            turns: 2,
            cost: 0.25,
            ..Usage::default()
        },
        error_code: code,
    }
}

/// Runs one call and answers it with `answer(wire_call_id)`.
async fn answered(answer: impl FnOnce(String) -> SubagentReply) -> SubagentToolOutput {
    let (tx, mut rx) = outbox();
    let calls = SubagentCalls::new(tx);
    let cancel = CancellationToken::new();
    let args = r#"{"agent":"general","task":"t"}"#;
    let call = run(&calls, "c", args, Duration::from_secs(60), &cancel);
    let answer_it = async {
        let Some(FromWorker::SpawnSubagent(request)) = rx.recv().await else {
            panic!("no spawn request was sent");
        };
        calls.deliver(answer(request.call_id)).unwrap();
    };
    let (output, ()) = tokio::join!(call, answer_it);
    output.unwrap()
}

#[tokio::test]
async fn a_reply_is_the_tool_result_and_carries_the_grandchilds_usage() {
    let output = answered(|id| reply(id, false, None)).await;
    assert_eq!(output.output, "out");
    assert!(!output.is_error);
    assert_eq!(output.usage.turns, 2);
}

#[tokio::test]
async fn a_refusal_names_its_code_for_the_model() {
    let output = answered(|id| reply(id, true, Some(ErrorCode::SubagentSpawnDenied))).await;
    assert!(output.is_error);
    assert_eq!(output.output, "SUBAGENT_SPAWN_DENIED: out");
}

#[tokio::test]
async fn a_cancel_drops_the_waiter() {
    let (tx, _rx) = outbox();
    let calls = SubagentCalls::new(tx);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let args = r#"{"agent":"general","task":"t"}"#;
    let output = run(&calls, "c", args, Duration::from_secs(60), &cancel).await;
    assert_eq!(output, None);
    assert_eq!(calls.waiting(), 0);
}

#[tokio::test]
async fn no_reply_by_the_deadline_is_a_timeout_error_and_leaves_no_waiter() {
    let (tx, _rx) = outbox();
    let calls = SubagentCalls::new(tx);
    let cancel = CancellationToken::new();
    let args = r#"{"agent":"general","task":"t"}"#;
    let output = run(&calls, "c", args, Duration::from_millis(10), &cancel)
        .await
        .unwrap();
    assert!(output.is_error);
    assert!(
        output.output.starts_with("SUBAGENT_TIMEOUT"),
        "{}",
        output.output
    );
    assert_eq!(calls.waiting(), 0);
}
