use pretty_assertions::assert_eq;
use subagent_protocol::{FromWorker, WorkerEvent};

use super::*;

fn text(t: &str) -> FromWorker {
    FromWorker::Event(WorkerEvent::TextDelta { text: t.into() })
}

fn turn(n: u32) -> FromWorker {
    FromWorker::Event(WorkerEvent::TurnStart { turn: n })
}

fn drain(rx: &mut OutboxReceiver) -> Vec<FromWorker> {
    std::iter::from_fn(|| rx.try_recv()).collect()
}

#[test]
fn frames_come_out_in_order() {
    let (tx, mut rx) = outbox();
    tx.send(turn(1));
    tx.send(text("a"));
    tx.send(FromWorker::Pong);
    assert_eq!(drain(&mut rx), vec![turn(1), text("a"), FromWorker::Pong]);
}

#[test]
fn a_reader_that_never_comes_keeps_the_frame_count_bounded() {
    let (tx, rx) = with_limits(4, 1 << 20);
    for i in 0..10_000 {
        tx.send(text(&format!("{i},")));
    }
    assert_eq!(
        rx.len(),
        4,
        "deltas past the threshold merge into the last one"
    );
}

#[test]
fn merged_deltas_lose_no_text_and_keep_order_with_other_frames() {
    let (tx, mut rx) = with_limits(2, 1 << 20);
    tx.send(turn(1));
    for piece in ["a", "b", "c", "d"] {
        tx.send(text(piece));
    }
    tx.send(turn(2));
    tx.send(text("e"));
    let frames = drain(&mut rx);
    assert_eq!(frames, vec![turn(1), text("abcd"), turn(2), text("e")]);
}

#[test]
fn past_the_byte_cap_deltas_are_dropped_and_counted_before_the_next_frame() {
    let (tx, mut rx) = with_limits(1024, 10);
    tx.send(text("0123456789"));
    tx.send(text("lost"));
    tx.send(text("gone"));
    tx.send(turn(2));
    let frames = drain(&mut rx);
    assert_eq!(frames.len(), 3, "{frames:?}");
    assert_eq!(frames[0], text("0123456789"));
    match &frames[1] {
        FromWorker::Event(WorkerEvent::Log { message, .. }) => {
            assert!(message.starts_with("8 bytes of streamed text"), "{message}")
        }
        other => panic!("expected the drop warning, got {other:?}"),
    }
    assert_eq!(frames[2], turn(2));
}

#[test]
fn draining_frees_the_byte_budget() {
    let (tx, mut rx) = with_limits(1024, 10);
    tx.send(text("0123456789"));
    assert_eq!(drain(&mut rx).len(), 1);
    tx.send(text("0123456789"));
    assert_eq!(drain(&mut rx), vec![text("0123456789")]);
}

#[tokio::test]
async fn recv_waits_for_a_frame_and_ends_when_every_sender_is_gone() {
    let (tx, mut rx) = outbox();
    let second = tx.clone();
    let producer = tokio::spawn(async move {
        tokio::task::yield_now().await;
        second.send(FromWorker::Pong);
    });
    assert_eq!(rx.recv().await, Some(FromWorker::Pong));
    producer.await.unwrap();
    tx.send(turn(1));
    drop(tx);
    assert_eq!(rx.recv().await, Some(turn(1)));
    assert_eq!(rx.recv().await, None);
}

#[test]
fn a_stalled_supervisor_cannot_make_the_event_sink_grow_without_bound() {
    // What the agent loop does while a model streams and nobody reads fd 3.
    let (sink, rx) = crate::agent::EventSink::channel();
    for i in 0..(4 * COALESCE_AFTER_FRAMES) {
        sink.emit(WorkerEvent::TextDelta {
            text: format!("{i} "),
        });
    }
    assert_eq!(rx.len(), COALESCE_AFTER_FRAMES);
}
