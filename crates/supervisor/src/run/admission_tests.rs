use pretty_assertions::assert_eq;
use subagent_protocol::{ProviderKind, ProviderSpec};

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
