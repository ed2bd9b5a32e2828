use pretty_assertions::assert_eq;
use subagent_protocol::{Budget, Usage};

use super::*;

fn budget(max_turns: u32, max_cost: Option<f64>) -> Budget {
    Budget {
        max_turns,
        max_cost,
    }
}

fn spent(turns: u32, cost: f64) -> Usage {
    Usage {
        turns,
        cost,
        ..Usage::default()
    }
}

fn asked(max_turns: Option<u32>, max_cost: Option<f64>) -> Asked {
    Asked {
        max_turns,
        max_cost,
    }
}

#[test]
fn a_spawn_asking_more_turns_than_are_left_is_refused_with_both_figures() {
    let mut share = BudgetShare::new(budget(2, None));
    let refused = share.reserve(&spent(1, 0.0), asked(Some(5), None));
    assert_eq!(refused, Err(Unaffordable::Turns { asked: 5, left: 1 }));
    let message = refused.unwrap_err().to_string();
    assert!(
        message.contains("5 model turns") && message.contains("1 left"),
        "{message}"
    );
}

#[test]
fn a_spawn_asking_nothing_gets_what_is_left_up_to_the_default() {
    let mut share = BudgetShare::new(budget(10, Some(1.0)));
    let (_, got) = share.reserve(&spent(3, 0.25), Asked::default()).unwrap();
    assert_eq!(got, budget(7, Some(0.75)));

    let mut roomy = BudgetShare::new(budget(500, None));
    let (_, got) = roomy.reserve(&Usage::default(), Asked::default()).unwrap();
    assert_eq!(got, budget(Budget::default().max_turns, None));
}

#[test]
fn outstanding_reservations_are_not_lent_twice() {
    let mut share = BudgetShare::new(budget(10, None));
    let own = spent(2, 0.0);
    share.reserve(&own, asked(Some(5), None)).unwrap();
    assert_eq!(share.left(&own).turns, 3);
    assert_eq!(
        share.reserve(&own, asked(Some(4), None)),
        Err(Unaffordable::Turns { asked: 4, left: 3 })
    );
    let (_, got) = share.reserve(&own, Asked::default()).unwrap();
    assert_eq!(got.max_turns, 3);
    assert_eq!(
        share.reserve(&own, Asked::default()),
        Err(Unaffordable::Turns { asked: 1, left: 0 })
    );
}

#[test]
fn settling_returns_the_unspent_part_and_counts_what_was_spent() {
    let mut share = BudgetShare::new(budget(10, Some(2.0)));
    let own = spent(1, 0.5);
    let (id, _) = share.reserve(&own, asked(Some(6), Some(1.0))).unwrap();
    assert_eq!(
        share.left(&own),
        Left {
            turns: 3,
            cost: Some(0.5)
        }
    );
    share.settle(id, &spent(2, 0.25));
    assert_eq!(
        share.left(&own),
        Left {
            turns: 7,
            cost: Some(1.25)
        }
    );
    assert_eq!(share.nested_spent().turns, 2);
    // Settling twice counts nothing twice.
    share.settle(id, &spent(2, 0.25));
    assert_eq!(share.nested_spent().turns, 2);
}

#[test]
fn cost_asked_beyond_what_is_left_or_with_nothing_left_is_refused() {
    let mut share = BudgetShare::new(budget(50, Some(1.0)));
    assert_eq!(
        share.reserve(&spent(1, 0.75), asked(None, Some(0.5))),
        Err(Unaffordable::Cost {
            asked: Some(0.5),
            left: 0.25
        })
    );
    assert_eq!(
        share.reserve(&spent(1, 1.5), Asked::default()),
        Err(Unaffordable::Cost {
            asked: None,
            left: 0.0
        })
    );
}

#[test]
fn an_unlimited_parent_passes_on_the_cost_asked_for() {
    let mut share = BudgetShare::new(budget(50, None));
    let (_, got) = share
        .reserve(&spent(1, 3.0), asked(Some(2), Some(0.1)))
        .unwrap();
    assert_eq!(got, budget(2, Some(0.1)));
}

#[test]
fn zero_turns_asked_is_refused() {
    let mut share = BudgetShare::new(budget(50, None));
    assert_eq!(
        share.reserve(&Usage::default(), asked(Some(0), None)),
        Err(Unaffordable::Turns { asked: 0, left: 50 })
    );
}
