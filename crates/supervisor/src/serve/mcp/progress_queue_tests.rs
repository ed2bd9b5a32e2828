use pretty_assertions::assert_eq;

use super::*;

#[tokio::test]
async fn messages_come_out_in_order_and_the_end_follows_the_sender() {
    let (tx, rx) = progress_queue();
    tx.push("one");
    tx.push("two");
    drop(tx);
    let first = rx.next().await.unwrap();
    assert_eq!((first.message.as_str(), first.sequence), ("one", 1));
    assert_eq!(rx.next().await.unwrap().sequence, 2);
    assert_eq!(rx.next().await, None);
}

#[tokio::test]
async fn a_full_queue_drops_the_oldest_and_says_how_many_before_the_next() {
    let (tx, rx) = progress_queue();
    let pushed = QUEUED_MESSAGES + 10;
    for n in 1..=pushed {
        tx.push(&format!("event {n}"));
    }
    let next = rx.next().await.unwrap();
    assert_eq!(next.message, "event 11");
    assert_eq!(next.sequence, 11);
    assert_eq!(next.dropped_before, 10);
    assert_eq!(rx.next().await.unwrap().dropped_before, 0);
    assert_eq!(rx.dropped(), 10);
}

#[test]
fn a_long_message_is_cut_at_a_character_boundary() {
    let long = "é".repeat(MESSAGE_BYTES);
    let short = cut(&long);
    assert!(short.len() <= MESSAGE_BYTES, "{}", short.len());
    assert!(short.ends_with("..."));
    assert_eq!(cut(&"x".repeat(10)), "x".repeat(10));
}

#[tokio::test]
async fn a_waiting_receiver_wakes_for_a_push_and_for_the_end() {
    let (tx, rx) = progress_queue();
    let waiting = tokio::spawn(async move {
        let first = rx.next().await.map(|d| d.message);
        (first, rx.next().await)
    });
    tokio::task::yield_now().await;
    tx.push("late");
    drop(tx);
    let (first, end) = waiting.await.unwrap();
    assert_eq!(first.as_deref(), Some("late"));
    assert_eq!(end, None);
}
