//! Cancellation ends the run within 100 ms, in a model turn or in a tool.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use subagent_protocol::{ErrorCode, StopReason};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::loop_support::{Hang, Turn, calls, run_with, spec, test_tools};

/// The requirement: a cancel ends the run within 100 ms.
const CANCEL_DEADLINE: Duration = Duration::from_millis(100);

#[tokio::test]
async fn cancel_while_the_provider_is_blocked_ends_the_run_at_once() {
    let cancel = CancellationToken::new();
    let (entered_tx, entered_rx) = oneshot::channel();
    let dropped = Arc::new(AtomicBool::new(false));
    let turns = vec![
        calls("first turn", &[("echo", r#"{"text": "x"}"#)]),
        Turn::Block {
            text: "half an ans".to_owned(),
            entered: entered_tx,
            dropped: Arc::clone(&dropped),
        },
    ];
    let spec = spec();
    let run = async {
        let ran = run_with(&spec, turns, test_tools(), None, cancel.clone()).await;
        (ran, Instant::now())
    };
    let canceller = async {
        entered_rx.await.expect("the provider was entered");
        cancel.cancel();
        Instant::now()
    };
    let ((ran, ended_at), cancelled_at) = tokio::join!(run, canceller);
    let took = ended_at.duration_since(cancelled_at);
    assert!(
        took < CANCEL_DEADLINE,
        "the run ended {took:?} after the cancel"
    );
    assert!(
        dropped.load(Ordering::SeqCst),
        "the provider's turn was not dropped"
    );
    assert_eq!(ran.outcome.stop_reason, StopReason::Cancelled);
    assert_eq!(
        ran.outcome.error.as_ref().map(|e| e.code),
        Some(ErrorCode::SubagentCancelled)
    );
    // What streamed before the cancel is kept.
    assert_eq!(ran.outcome.final_text, "half an ans");
}

#[tokio::test]
async fn cancel_while_a_tool_runs_drops_the_tool_and_ends_the_run() {
    let cancel = CancellationToken::new();
    let (entered_tx, entered_rx) = oneshot::channel();
    let dropped = Arc::new(AtomicBool::new(false));
    let mut tools = test_tools();
    tools
        .register(Arc::new(Hang {
            entered: Mutex::new(Some(entered_tx)),
            dropped: Arc::clone(&dropped),
        }))
        .unwrap();
    let mut spec = spec();
    spec.tools.push("hang".to_owned());
    let turns = vec![calls("looking", &[("hang", "{}")])];
    let run = async {
        let ran = run_with(&spec, turns, tools, None, cancel.clone()).await;
        (ran, Instant::now())
    };
    let canceller = async {
        entered_rx.await.expect("the tool was entered");
        cancel.cancel();
        Instant::now()
    };
    let ((ran, ended_at), cancelled_at) = tokio::join!(run, canceller);
    let took = ended_at.duration_since(cancelled_at);
    assert!(
        took < CANCEL_DEADLINE,
        "the run ended {took:?} after the cancel"
    );
    assert!(
        dropped.load(Ordering::SeqCst),
        "the tool's future was not dropped"
    );
    assert_eq!(ran.outcome.stop_reason, StopReason::Cancelled);
    assert_eq!(ran.outcome.final_text, "looking");
}
