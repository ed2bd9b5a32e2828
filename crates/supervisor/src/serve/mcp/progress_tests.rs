use pretty_assertions::assert_eq;

use super::*;

#[test]
fn messages_name_turns_tools_and_tokens() {
    let turn = ProgressEvent::Turn {
        run_id: "r1".to_owned(),
        turn: 2,
    };
    let tool = ProgressEvent::ToolStarted {
        run_id: "r1".to_owned(),
        name: "bash_read".to_owned(),
    };
    let usage = ProgressEvent::Usage {
        run_id: "r1".to_owned(),
        input_tokens: 120,
        cached_input_tokens: 0,
        output_tokens: 30,
        cost: 0.0,
        cut_by_max_tokens: false,
    };
    let cached = ProgressEvent::Usage {
        run_id: "r1".to_owned(),
        input_tokens: 11,
        cached_input_tokens: 93,
        output_tokens: 30,
        cost: 0.0,
        cut_by_max_tokens: true,
    };
    assert_eq!(message(&turn), "r1: turn 2");
    assert_eq!(message(&tool), "r1: tool bash_read");
    assert_eq!(message(&usage), "r1: tokens 120 in, 30 out, $0.0000");
    assert_eq!(
        message(&cached),
        "r1: tokens 11 in (+93 cached), 30 out, $0.0000; the turn was cut by max_tokens"
    );
    let todos = ProgressEvent::Todos {
        run_id: "r1".to_owned(),
        done: 1,
        total: 3,
        active: Some("Reading the secret plan".to_owned()),
    };
    assert_eq!(
        message(&todos),
        "r1: tasks 1/3 done",
        "counts, no model text"
    );
}

#[tokio::test]
async fn events_reach_the_call_whose_task_emits_them_and_no_other() {
    let sink = routing_sink();
    let (tx, rx) = super::super::progress_queue::progress_queue();
    let event = ProgressEvent::Turn {
        run_id: "r1".to_owned(),
        turn: 1,
    };
    // Outside any call: dropped, not a panic.
    sink.emit(&event);
    scoped(tx, async { sink.emit(&event) }).await;
    assert_eq!(rx.next().await.map(|d| d.message), Some(message(&event)));
    // The sender went with the scope, so the stream ends.
    assert_eq!(rx.next().await, None);
}

#[test]
fn a_queued_run_says_how_many_slots_are_taken_then_that_it_has_one() {
    let queued = ProgressEvent::Queued {
        run_id: "r2".to_owned(),
        agent: "general".to_owned(),
        running: 1,
        limit: 1,
    };
    assert_eq!(
        message(&queued),
        "r2: queued general: 1 of 1 slots are taken; it starts when one frees"
    );
    let admitted = ProgressEvent::LeftQueue {
        run_id: "r2".to_owned(),
        admitted: true,
    };
    assert_eq!(message(&admitted), "r2: running: it has a slot");
    let cancelled = ProgressEvent::LeftQueue {
        run_id: "r2".to_owned(),
        admitted: false,
    };
    assert!(message(&cancelled).contains("cancelled while queued"));
}
