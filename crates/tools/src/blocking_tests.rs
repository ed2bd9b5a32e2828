use std::sync::mpsc;
use std::time::Duration;

use pretty_assertions::assert_eq;

use super::*;

#[tokio::test]
async fn the_result_of_the_work_is_returned() {
    assert_eq!(run_blocking(|_| Ok(7)).await, Ok(7));
    assert_eq!(
        run_blocking(|_| Err::<(), _>(ToolError::Failed("no".to_owned()))).await,
        Err(ToolError::Failed("no".to_owned()))
    );
}

#[tokio::test]
async fn dropping_the_call_raises_the_flag_so_the_work_stops() {
    let (stopped_tx, stopped_rx) = mpsc::channel();
    let work = run_blocking(move |cancel| {
        // Bounded so a broken flag fails the test instead of hanging it.
        for _ in 0..1_000 {
            if cancel.is_raised() {
                stopped_tx.send(true).unwrap();
                return Err(CancelFlag::error());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        stopped_tx.send(false).unwrap();
        Ok(())
    });
    let timed_out = tokio::time::timeout(Duration::from_millis(50), work).await;
    assert!(timed_out.is_err());
    let stopped = tokio::task::spawn_blocking(move || stopped_rx.recv().unwrap())
        .await
        .unwrap();
    assert!(
        stopped,
        "the blocking work ran to its end after the call was dropped"
    );
}

#[tokio::test]
async fn a_panicking_task_becomes_a_tool_failure() {
    let result: Result<(), ToolError> = run_blocking(|_| panic!("boom")).await;
    let Err(ToolError::Failed(message)) = result else {
        panic!("expected a failure, got {result:?}");
    };
    assert!(
        message.starts_with("the tool's blocking task failed: "),
        "{message}"
    );
}
