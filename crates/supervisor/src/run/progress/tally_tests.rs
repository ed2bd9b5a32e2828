use pretty_assertions::assert_eq;
use subagent_protocol::ErrorCode;

use super::*;
use crate::run::progress::test_events::{ended, started, turn, usage};

#[test]
fn children_are_counted_as_they_start_end_and_fail() {
    let mut tally = ProgressTally::default();
    for event in [
        started("a"),
        started("b"),
        started("c"),
        ended("a", None),
        ended("b", Some(ErrorCode::SubagentTimeout)),
    ] {
        assert!(tally.observe(&event));
    }
    assert_eq!((tally.started(), tally.ended(), tally.failed()), (3, 2, 1));
    assert!(tally.child("c").is_some());
    assert!(tally.child("a").is_none(), "an ended child is folded in");
}

#[test]
fn usage_and_turns_are_each_childs_latest_summed_and_kept_after_it_ends() {
    let mut tally = ProgressTally::default();
    for event in [
        turn("a", 1),
        usage("a", 10, 2, 0.5),
        turn("a", 2),
        usage("a", 30, 5, 1.0),
        turn("b", 1),
        usage("b", 7, 1, 0.25),
    ] {
        tally.observe(&event);
    }
    let both = ProgressUsage {
        input_tokens: 37,
        cached_input_tokens: 74,
        output_tokens: 6,
        cost: 1.25,
    };
    assert_eq!((tally.turns(), tally.usage()), (3, both));
    assert_eq!(tally.running_usage(), both);
    tally.observe(&ended("a", None));
    assert_eq!((tally.turns(), tally.usage()), (3, both));
    assert_eq!(
        tally.running_usage(),
        ProgressUsage {
            input_tokens: 7,
            cached_input_tokens: 14,
            output_tokens: 1,
            cost: 0.25,
        }
    );
    assert_eq!(tally.running_usage().tokens(), 8);
}

#[test]
fn tool_events_change_no_figure() {
    let mut tally = ProgressTally::default();
    let before = tally.clone();
    assert!(!tally.observe(&ProgressEvent::ToolStarted {
        run_id: "a".into(),
        name: "bash_read".into(),
    }));
    assert!(!tally.observe(&ProgressEvent::ToolFinished {
        run_id: "a".into(),
        name: "bash_read".into(),
        is_error: true,
    }));
    assert_eq!(tally, before);
}

#[test]
fn a_child_keeps_its_highest_turn_its_latest_cost_and_its_token_figures() {
    let mut child = ChildProgress::default();
    child.observe(&turn("a", 2));
    child.observe(&turn("a", 1));
    child.observe(&usage("a", 10, 3, 0.5));
    child.observe(&usage("a", 20, 4, 0.75));
    assert_eq!(child.turn, 2);
    assert_eq!(
        child.usage(),
        ProgressUsage {
            input_tokens: 20,
            cached_input_tokens: 40,
            output_tokens: 4,
            cost: 0.75,
        }
    );
}

#[test]
fn a_results_usage_counts_the_cache_on_its_own_as_progress_events_do() {
    let usage = subagent_protocol::Usage {
        input: 10,
        output: 4,
        cache_read: 100,
        cache_write: 5,
        cost: 0.5,
        ..subagent_protocol::Usage::default()
    };
    let event = ProgressEvent::usage("a", &usage, None);
    let mut child = ChildProgress::default();
    child.observe(&event);
    assert_eq!(ProgressUsage::from(&usage), child.usage());
    assert_eq!(
        ProgressUsage::from(&usage).plus(ProgressUsage::from(&usage)),
        ProgressUsage {
            input_tokens: 20,
            cached_input_tokens: 210,
            output_tokens: 8,
            cost: 1.0,
        }
    );
}

#[test]
fn the_running_childrens_task_lists_add_up_and_an_ended_ones_leaves() {
    let todos = |run_id: &str, done: usize, total: usize| ProgressEvent::Todos {
        run_id: run_id.into(),
        done,
        total,
        active: Some("Doing it".into()),
    };
    let mut tally = ProgressTally::default();
    tally.observe(&started("a"));
    tally.observe(&started("b"));
    assert_eq!(tally.running_todos(), (0, 0));
    assert!(!tally.observe(&todos("a", 1, 3)), "no total changes");
    tally.observe(&todos("a", 2, 3));
    tally.observe(&todos("b", 0, 4));
    tally.observe(&todos("gone", 5, 5));
    assert_eq!(tally.running_todos(), (2, 7));
    tally.observe(&ended("a", None));
    assert_eq!(tally.running_todos(), (0, 4));
}
