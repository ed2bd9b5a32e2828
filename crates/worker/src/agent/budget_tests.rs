use pretty_assertions::assert_eq;
use subagent_protocol::{Budget, StopReason};

use super::*;

#[test]
fn turns_run_out_exactly_at_the_limit() {
    let mut tracker = BudgetTracker::new(Budget {
        max_turns: 2,
        max_cost: None,
    });
    assert_eq!(tracker.exhausted(), None);
    tracker.record_turn(0.0);
    assert_eq!(tracker.exhausted(), None);
    tracker.record_turn(0.0);
    assert_eq!(
        tracker.exhausted(),
        Some(BudgetExhausted::Turns { max_turns: 2 })
    );
    assert_eq!(tracker.turns_used(), 2);
}

#[test]
fn zero_turns_allow_nothing() {
    let tracker = BudgetTracker::new(Budget {
        max_turns: 0,
        max_cost: None,
    });
    assert_eq!(
        tracker.exhausted().map(BudgetExhausted::stop_reason),
        Some(StopReason::MaxTurns)
    );
}

#[test]
fn cost_accumulates_and_runs_out_at_or_above_the_limit() {
    let mut tracker = BudgetTracker::new(Budget {
        max_turns: 100,
        max_cost: Some(0.5),
    });
    tracker.record_turn(0.25);
    assert_eq!(tracker.exhausted(), None);
    tracker.record_turn(0.125);
    assert_eq!(tracker.exhausted(), None);
    assert_eq!(tracker.cost_spent(), 0.375);
    tracker.record_turn(0.125);
    assert_eq!(
        tracker.exhausted(),
        Some(BudgetExhausted::Cost {
            max_cost: 0.5,
            spent: 0.5
        })
    );
}

#[test]
fn unlimited_cost_never_runs_out() {
    let mut tracker = BudgetTracker::new(Budget {
        max_turns: 100,
        max_cost: None,
    });
    tracker.record_turn(1.0e9);
    assert_eq!(tracker.exhausted(), None);
}

#[test]
fn the_turn_limit_wins_when_both_ran_out() {
    let mut tracker = BudgetTracker::new(Budget {
        max_turns: 1,
        max_cost: Some(0.01),
    });
    tracker.record_turn(1.0);
    assert_eq!(
        tracker.exhausted(),
        Some(BudgetExhausted::Turns { max_turns: 1 })
    );
}

#[test]
fn messages_name_the_budget_its_value_and_how_to_raise_it() {
    let turns = BudgetExhausted::Turns { max_turns: 3 }.message();
    assert!(turns.contains("max_turns = 3"), "{turns}");
    assert!(turns.contains("Raise max_turns"), "{turns}");
    let cost = BudgetExhausted::Cost {
        max_cost: 0.25,
        spent: 0.3,
    }
    .message();
    assert!(
        cost.contains("$0.3000 spent of the $0.2500 allowed"),
        "{cost}"
    );
    assert!(cost.contains("Raise max_cost"), "{cost}");
}

#[test]
fn a_nested_subagents_turns_and_cost_count_against_the_parent() {
    let mut b = BudgetTracker::new(Budget {
        max_turns: 5,
        max_cost: Some(1.0),
    });
    b.record_turn(0.1);
    b.record_nested(4, 0.2);
    assert_eq!(b.turns_used(), 5);
    assert!((b.cost_spent() - 0.3).abs() < 1e-9);
    assert_eq!(b.exhausted(), Some(BudgetExhausted::Turns { max_turns: 5 }));
}
