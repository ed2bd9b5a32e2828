use pretty_assertions::assert_eq;
use subagent_protocol::{FromWorker, SpawnRequest, SubagentReply, Usage};

use super::*;
use crate::outbox::outbox;

fn request(call_id: &str) -> SpawnRequest {
    SpawnRequest {
        call_id: call_id.into(),
        agent: "general".into(),
        task: "look".into(),
        output_schema_json: None,
        max_turns: None,
        max_cost: None,
        tools: None,
        limits_json: None,
    }
}

fn reply(call_id: &str, output: &str) -> SubagentReply {
    SubagentReply {
        call_id: call_id.into(),
        is_error: false,
        output: output.into(),
        usage: Usage::default(),
        error_code: None,
    }
}

fn sent_call_id(frame: Option<FromWorker>) -> String {
    match frame {
        Some(FromWorker::SpawnSubagent(request)) => request.call_id,
        other => panic!("expected a SpawnSubagent frame, got {other:?}"),
    }
}

#[tokio::test]
async fn a_reply_reaches_the_call_that_asked_for_it() {
    let (tx, mut rx) = outbox();
    let calls = SubagentCalls::new(tx);
    let waiting = tokio::spawn({
        let calls = calls.clone();
        async move { calls.call(request("call_1")).await }
    });
    let call_id = sent_call_id(rx.recv().await);
    assert!(call_id.starts_with("call_1#"), "{call_id}");
    assert_eq!(calls.deliver(reply(&call_id, "done")), Ok(()));
    let got = waiting.await.unwrap().unwrap();
    assert_eq!(got.output, "done");
    assert_eq!(calls.waiting(), 0);
}

#[tokio::test]
async fn the_same_model_call_id_twice_gets_two_wire_ids() {
    let (tx, mut rx) = outbox();
    let calls = SubagentCalls::new(tx);
    let first = tokio::spawn({
        let calls = calls.clone();
        async move { calls.call(request("call_1")).await }
    });
    let first_id = sent_call_id(rx.recv().await);
    let second = tokio::spawn({
        let calls = calls.clone();
        async move { calls.call(request("call_1")).await }
    });
    let second_id = sent_call_id(rx.recv().await);
    assert_ne!(first_id, second_id);
    calls.deliver(reply(&second_id, "two")).unwrap();
    calls.deliver(reply(&first_id, "one")).unwrap();
    assert_eq!(first.await.unwrap().unwrap().output, "one");
    assert_eq!(second.await.unwrap().unwrap().output, "two");
}

#[tokio::test]
async fn an_abandoned_call_leaves_no_entry_and_its_late_reply_is_handed_back() {
    let (tx, mut rx) = outbox();
    let calls = SubagentCalls::new(tx);
    let abandoned = tokio::time::timeout(
        std::time::Duration::from_millis(1),
        calls.call(request("call_1")),
    )
    .await;
    assert!(
        abandoned.is_err(),
        "nothing answered, so the wait timed out"
    );
    assert_eq!(calls.waiting(), 0, "the dropped waiter removed its entry");
    let call_id = sent_call_id(rx.recv().await);
    let late = calls.deliver(reply(&call_id, "late")).unwrap_err();
    assert_eq!(late.output, "late");
}

#[test]
fn a_reply_nothing_asked_for_is_handed_back() {
    let (tx, _rx) = outbox();
    let calls = SubagentCalls::new(tx);
    let back = calls.deliver(reply("made-up", "x")).unwrap_err();
    assert_eq!(back.call_id, "made-up");
}
