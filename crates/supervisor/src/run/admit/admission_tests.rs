use pretty_assertions::assert_eq;
use subagent_protocol::{ProviderKind, ProviderSpec};

use futures_util::FutureExt;

use super::*;

fn request(caller_depth: u32, max_depth: u32) -> RunRequest {
    let provider = ProviderSpec::new(ProviderKind::OpenaiChat, "http://127.0.0.1:9/v1", "m");
    RunRequest {
        caller_depth,
        max_depth,
        ..RunRequest::new("general", "t", provider)
    }
}

fn spawn_from(parent: &RunRequest) -> Result<(), Refusal> {
    let mut share = BudgetShare::new(Budget::default());
    admit_spawn(parent, &mut share, &Usage::default(), Asked::default()).map(|_| ())
}

#[test]
fn a_grandchild_may_run_only_below_the_depth_limit() {
    // A top-level child (depth 1) under --max-depth 2 may spawn at depth 2.
    assert_eq!(spawn_from(&request(0, 2)), Ok(()));
    // At the default limit of 1 it may not: its child would be at depth 2.
    let refused = spawn_from(&request(0, 1)).unwrap_err();
    assert_eq!(refused.code, ErrorCode::SubagentDepthExceeded);
    assert!(
        refused.message.contains("depth 2") && refused.message.contains("limit is 1"),
        "{refused:?}"
    );
    assert!(spawn_from(&request(1, 2)).is_err());
}

#[test]
fn a_root_run_and_a_grandchild_are_held_to_the_same_depth_rule() {
    // A caller at depth 1 under --max-depth 1: its child would be at depth 2.
    let child = check_depth(1, 1, "a child").unwrap_err();
    let grandchild = spawn_from(&request(0, 1)).unwrap_err();
    assert_eq!(child.code, grandchild.code);
    assert_eq!(
        child.message.replace("a child", "a subagent"),
        grandchild.message
    );
}

#[test]
fn a_spawn_the_parent_cannot_afford_is_refused_before_it_starts() {
    let parent = request(0, 2);
    let mut share = BudgetShare::new(Budget {
        max_turns: 2,
        ..Budget::default()
    });
    let asked = Asked {
        max_turns: Some(3),
        max_cost: None,
    };
    let refused = admit_spawn(&parent, &mut share, &Usage::default(), asked).unwrap_err();
    assert_eq!(refused.code, ErrorCode::SubagentSpawnDenied);
    assert!(
        refused
            .message
            .starts_with("spawn refused before it started: "),
        "{refused:?}"
    );
    assert!(
        refused.message.contains("3 model turns") && refused.message.contains("2 left"),
        "{refused:?}"
    );
}

#[test]
fn the_tree_cap_counts_every_spawn_and_stops_at_the_cap() {
    let tree = SpawnTree::new(2);
    assert_eq!(tree.take_one(), Ok(()));
    assert_eq!(tree.take_one(), Ok(()));
    assert_eq!(tree.take_one(), Err(2));
    assert_eq!(tree.take_one(), Err(2), "a refusal does not use up the cap");
}

fn config() -> SupervisorConfig {
    let worker = crate::request::WorkerCommand {
        program: "/nonexistent/worker".into(),
        args: Vec::new(),
    };
    SupervisorConfig::new(worker, "/nonexistent/sessions".into())
}

#[tokio::test]
async fn a_root_run_over_the_limit_waits_for_a_slot_and_takes_the_freed_one() {
    let admission = Admission::new(1);
    let config = config();
    let never = CancellationToken::new();
    let first = admission
        .admit(&config, &request(0, 1), None, &never, |_| {})
        .await
        .unwrap();
    let mut steps = Vec::new();
    let asked = request(0, 1);
    let admitted = {
        let second = admission.admit(&config, &asked, None, &never, |s| steps.push(s));
        tokio::pin!(second);
        // Polled once: every slot is taken, so it waits instead of refusing.
        assert!(second.as_mut().now_or_never().is_none());
        assert_eq!(admission.queued(), 1);
        drop(first);
        second.await
    };
    assert!(admitted.is_ok(), "{admitted:?}");
    assert_eq!(admission.queued(), 0);
    assert_eq!(admission.running(), 1);
    assert_eq!(
        steps,
        [
            QueueStep::Waiting {
                running: 1,
                limit: 1
            },
            QueueStep::Left { admitted: true }
        ]
    );
}

#[tokio::test]
async fn a_queued_run_whose_cancel_fires_is_not_admitted_and_holds_no_slot() {
    let admission = Admission::new(1);
    let config = config();
    let _first = admission
        .admit(
            &config,
            &request(0, 1),
            None,
            &CancellationToken::new(),
            |_| {},
        )
        .await
        .unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let mut steps = Vec::new();
    let queued = admission
        .admit(&config, &request(0, 1), None, &cancel, |s| steps.push(s))
        .await;
    assert!(
        matches!(queued, Err(NotAdmitted::CancelledInQueue { limit: 1, .. })),
        "{queued:?}"
    );
    assert_eq!(steps.last(), Some(&QueueStep::Left { admitted: false }));
    assert_eq!((admission.queued(), admission.running()), (0, 1));
}

#[tokio::test]
async fn a_nested_run_over_the_nested_limit_is_refused_not_queued() {
    let admission = Admission::new(1);
    let config = config();
    let tree = SpawnTree::new(8);
    let never = CancellationToken::new();
    let _first = admission
        .admit(
            &config,
            &request(0, 2),
            Some(Arc::clone(&tree)),
            &never,
            |_| {},
        )
        .await
        .unwrap();
    let refused = admission
        .admit(&config, &request(0, 2), Some(tree), &never, |_| {
            panic!("a nested run never queues")
        })
        .await;
    let Err(NotAdmitted::Refused(refusal)) = refused else {
        panic!("{refused:?}");
    };
    assert_eq!(refusal.code, ErrorCode::SubagentSpawnDenied);
    assert!(refusal.message.contains("limit is 1"), "{refusal:?}");
}
