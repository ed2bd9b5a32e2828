//! The concurrency limit queues (issue 26): a root run over
//! `max_concurrent` waits for a slot instead of being refused, says so in
//! its progress, runs once a slot frees, and when cancelled while it waits
//! ends cancelled with a session file and no worker ever started.
//!
//! A `fixture:sleep` run holds the only slot until its token fires; every
//! wait is on a progress event, never a sleep.

use std::sync::Arc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::Value;
use subagent_supervisor::run::{ProgressEvent, ProgressSink};
use subagent_supervisor::{RunRequest, Supervisor};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::support::*;

/// Longest wait for one progress event.
const EVENT_TIMEOUT: Duration = Duration::from_secs(30);

/// A supervisor of `max_concurrent = 1` over the by-task fixture, and the
/// progress events of its runs.
fn one_slot(f: &Fixture) -> (Arc<Supervisor>, mpsc::UnboundedReceiver<ProgressEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut config = f.config();
    config.max_concurrent = 1;
    config.progress = Some(ProgressSink::new(move |event: &ProgressEvent| {
        let _ = tx.send(event.clone());
    }));
    (Arc::new(Supervisor::new(config)), rx)
}

fn task(f: &Fixture, task: &str) -> RunRequest {
    RunRequest {
        task: task.to_owned(),
        ..f.request()
    }
}

/// The next event for which `pred` holds (others are dropped).
async fn next_event(
    rx: &mut mpsc::UnboundedReceiver<ProgressEvent>,
    what: &str,
    pred: impl Fn(&ProgressEvent) -> bool,
) -> ProgressEvent {
    tokio::time::timeout(EVENT_TIMEOUT, async {
        loop {
            let event = rx.recv().await.expect("the supervisor lives");
            if pred(&event) {
                return event;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {what} within {EVENT_TIMEOUT:?}"))
}

/// Starts a `fixture:sleep` run holding the only slot; returns once its
/// worker is in its first turn, with its cancel token and its task.
async fn hold_the_slot(
    f: &Fixture,
    sup: &Arc<Supervisor>,
    rx: &mut mpsc::UnboundedReceiver<ProgressEvent>,
) -> (CancellationToken, tokio::task::JoinHandle<Value>) {
    let hold = CancellationToken::new();
    let (s, c, r) = (Arc::clone(sup), hold.clone(), task(f, "fixture:sleep"));
    let holder = tokio::spawn(async move { serde_json::to_value(s.run(r, c).await).unwrap() });
    next_event(rx, "the holder's first turn", |e| {
        matches!(e, ProgressEvent::Turn { .. })
    })
    .await;
    (hold, holder)
}

#[tokio::test]
async fn a_run_over_the_concurrency_limit_waits_for_a_slot_and_runs_when_one_frees() {
    let f = Fixture::new("by-task");
    let (sup, mut rx) = one_slot(&f);
    let (hold, holder) = hold_the_slot(&f, &sup, &mut rx).await;

    let (s, r) = (Arc::clone(&sup), task(&f, "fixture:success"));
    let waiting = tokio::spawn(async move {
        serde_json::to_value(s.run(r, CancellationToken::new()).await).unwrap()
    });
    let queued = next_event(&mut rx, "Queued", |e| {
        matches!(e, ProgressEvent::Queued { .. })
    })
    .await;
    let ProgressEvent::Queued {
        run_id,
        agent,
        running,
        limit,
    } = queued
    else {
        unreachable!()
    };
    assert_eq!((agent.as_str(), running, limit), ("general", 1, 1));
    assert_eq!(sup.queued(), 1);
    assert!(!waiting.is_finished(), "it waits rather than being refused");

    hold.cancel();
    let left = next_event(&mut rx, "LeftQueue", |e| {
        matches!(e, ProgressEvent::LeftQueue { .. })
    })
    .await;
    assert_eq!(
        left,
        ProgressEvent::LeftQueue {
            run_id: run_id.clone(),
            admitted: true
        }
    );
    let held = holder.await.unwrap();
    assert_eq!(held["details"]["error"]["code"], "SUBAGENT_CANCELLED");
    let ran = waiting.await.unwrap();
    assert_valid_result(&ran);
    assert!(ran["details"]["error"].is_null(), "{ran:#}");
    assert_eq!(
        ran["details"]["runId"],
        run_id.as_str(),
        "one id, queued and run"
    );
    assert_children_reaped(&ran);
    assert_eq!((sup.queued(), sup.running()), (0, 0));
    assert_no_survivors(&f.marker);
}

#[tokio::test]
async fn a_run_cancelled_while_queued_ends_cancelled_with_a_session_file_and_no_worker() {
    let f = Fixture::new("by-task");
    let (sup, mut rx) = one_slot(&f);
    let (hold, holder) = hold_the_slot(&f, &sup, &mut rx).await;

    let cancel = CancellationToken::new();
    let (s, c, r) = (
        Arc::clone(&sup),
        cancel.clone(),
        task(&f, "fixture:success"),
    );
    let waiting = tokio::spawn(async move { serde_json::to_value(s.run(r, c).await).unwrap() });
    next_event(&mut rx, "Queued", |e| {
        matches!(e, ProgressEvent::Queued { .. })
    })
    .await;
    cancel.cancel();
    let cancelled = waiting.await.unwrap();
    assert_valid_result(&cancelled);
    assert_eq!(cancelled["details"]["error"]["code"], "SUBAGENT_CANCELLED");
    let single = &cancelled["details"]["results"][0];
    assert_eq!(single["stopReason"], "cancelled");
    assert!(
        single["termination"].is_null(),
        "no worker ran, so no process ended: {single:#}"
    );
    assert!(
        single["error"].as_str().unwrap().contains("queued"),
        "{single:#}"
    );
    // The record of a cancelled run: header, start, the cancel, an aborted
    // ending; no pid anywhere, since no worker was spawned.
    let lines = check_session_file(std::path::Path::new(
        single["sessionFile"].as_str().unwrap(),
    ));
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["session", "agent_event", "limit", "agent_event"]);
    assert_eq!(lines[2]["limit"], "cancel");
    assert_eq!(lines[3]["status"], "aborted");
    assert!(lines.iter().all(|l| l["pid"].is_null()), "{lines:#?}");

    // The holder was untouched by it.
    assert!(!holder.is_finished());
    assert_eq!((sup.queued(), sup.running()), (0, 1));
    hold.cancel();
    let held = holder.await.unwrap();
    assert_eq!(held["details"]["error"]["code"], "SUBAGENT_CANCELLED");
    assert_no_survivors(&f.marker);
}
