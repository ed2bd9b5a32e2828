use pretty_assertions::assert_eq;

use super::*;
use crate::run::test_events::{turn, usage};

#[test]
fn usage_and_turns_are_the_latest_per_child_summed_over_children() {
    let mut s = Streaming::default();
    for event in [
        turn("a", 1),
        usage("a", 10, 2, 0.5),
        turn("a", 2),
        usage("a", 30, 5, 1.0),
        turn("b", 1),
        usage("b", 7, 1, 0.25),
    ] {
        assert!(s.observe(&event));
    }
    assert_eq!(s.turn_count, 3);
    assert_eq!(
        s.usage,
        StreamingUsage {
            input_tokens: 37,
            cached_input_tokens: 74,
            output_tokens: 6,
            cost: 1.25
        }
    );
}

#[test]
fn tool_calls_become_display_items_up_to_the_cap() {
    let mut s = Streaming::default();
    let call = ProgressEvent::ToolStarted {
        run_id: "a".into(),
        name: "bash_read".into(),
    };
    for _ in 0..MAX_DISPLAY_ITEMS {
        assert!(s.observe(&call));
    }
    assert!(!s.observe(&call), "past the cap nothing changes");
    assert_eq!(s.display_items.len(), MAX_DISPLAY_ITEMS);
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["displayItems"][0]["name"], "bash_read");
    assert!(json.get("turnCount").is_some());
}

#[test]
fn a_job_is_queued_while_a_child_waits_and_none_runs() {
    let queued = |run_id: &str| ProgressEvent::Queued {
        run_id: run_id.into(),
        agent: "general".into(),
        running: 1,
        limit: 1,
    };
    let left = |run_id: &str, admitted| ProgressEvent::LeftQueue {
        run_id: run_id.into(),
        admitted,
    };
    let started = |run_id: &str| ProgressEvent::Started {
        run_id: run_id.into(),
        agent: "general".into(),
        model: "m".into(),
    };
    let ended = |run_id: &str| ProgressEvent::Ended {
        run_id: run_id.into(),
        error: None,
    };
    let mut s = Streaming::default();
    assert!(!s.is_queued(), "a job that waits for nothing is not queued");
    assert!(s.observe(&queued("a")), "a client sees the wait");
    assert!(s.is_queued());
    assert!(s.observe(&left("a", true)));
    assert!(!s.is_queued(), "with its slot it is running");
    s.observe(&started("a"));
    s.observe(&queued("b"));
    assert!(
        !s.is_queued(),
        "one child runs: the job runs though b waits"
    );
    s.observe(&ended("a"));
    assert!(s.is_queued(), "a is over and b still waits");
    s.observe(&left("b", false));
    s.observe(&ended("b"));
    assert!(!s.is_queued());
    assert_eq!((s.children_started, s.children_ended), (1, 2));
}
