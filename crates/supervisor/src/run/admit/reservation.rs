//! The budget a parent shares with the subagents it spawns: what it has
//! left, reservations taken before a grandchild starts, and the unspent
//! part given back when it ends.
//!
//! Pure arithmetic, no I/O: the watch of the parent owns one
//! [`BudgetShare`] and calls it when a spawn request arrives and when a
//! grandchild ends. What the parent itself spent is what the supervisor saw
//! in its `Usage` events; the worker reports only its own turns there, so
//! nothing is counted twice.

use std::collections::HashMap;
use std::fmt;

use subagent_protocol::{Budget, Usage};

/// Names one outstanding reservation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(in crate::run) struct ReservationId(u64);

/// What a spawn asks for; `None` takes what is left (turns: at most the
/// default budget's).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(in crate::run) struct Asked {
    pub max_turns: Option<u32>,
    pub max_cost: Option<f64>,
}

/// What the parent has left now; `cost: None` is unlimited.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::run) struct Left {
    pub turns: u32,
    pub cost: Option<f64>,
}

/// Why a spawn cannot be afforded, with the figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::run) enum Unaffordable {
    /// More turns asked for than are left (or none are left).
    Turns { asked: u32, left: u32 },
    /// More dollars asked for than are left (or none are left).
    Cost { asked: Option<f64>, left: f64 },
}

impl fmt::Display for Unaffordable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unaffordable::Turns { asked, left } => write!(
                f,
                "the subagent would need {asked} model turns and its parent has {left} left \
                 (its own budget, less what it and its other subagents used or reserved); ask \
                 for fewer turns with maxTurns or do the work directly"
            ),
            Unaffordable::Cost {
                asked: Some(asked),
                left,
            } => write!(
                f,
                "the subagent would need ${asked:.4} and its parent has ${left:.4} left; ask \
                 for less with maxCost or do the work directly"
            ),
            Unaffordable::Cost { asked: None, left } => write!(
                f,
                "its parent has ${left:.4} of its cost budget left, nothing to give a \
                 subagent; do the work directly"
            ),
        }
    }
}

/// One parent's budget, what its subagents spent and what is reserved.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::run) struct BudgetShare {
    budget: Budget,
    /// Turns and cost of subagents that ended.
    nested_spent: Usage,
    outstanding: HashMap<ReservationId, Budget>,
    next_id: u64,
}

impl BudgetShare {
    /// Nothing spent and nothing reserved against `budget`.
    pub(in crate::run) fn new(budget: Budget) -> Self {
        Self {
            budget,
            nested_spent: Usage::default(),
            outstanding: HashMap::new(),
            next_id: 0,
        }
    }

    /// What is left, given what the parent itself has spent (`own`).
    pub(in crate::run) fn left(&self, own: &Usage) -> Left {
        let reserved_turns: u32 = self.outstanding.values().map(|b| b.max_turns).sum();
        let reserved_cost: f64 = self.outstanding.values().filter_map(|b| b.max_cost).sum();
        let turns = self
            .budget
            .max_turns
            .saturating_sub(own.turns)
            .saturating_sub(self.nested_spent.turns)
            .saturating_sub(reserved_turns);
        let cost = self
            .budget
            .max_cost
            .map(|max| (max - own.cost - self.nested_spent.cost - reserved_cost).max(0.0));
        Left { turns, cost }
    }

    /// Reserves the grandchild's budget before it starts, or says why it
    /// cannot be afforded. A reservation is never larger than what is left.
    pub(in crate::run) fn reserve(
        &mut self,
        own: &Usage,
        asked: Asked,
    ) -> Result<(ReservationId, Budget), Unaffordable> {
        let left = self.left(own);
        let turns = match asked.max_turns {
            Some(asked) if asked > left.turns || asked == 0 => {
                return Err(Unaffordable::Turns {
                    asked,
                    left: left.turns,
                });
            }
            Some(asked) => asked,
            None if left.turns == 0 => {
                return Err(Unaffordable::Turns { asked: 1, left: 0 });
            }
            None => left.turns.min(Budget::default().max_turns),
        };
        let cost = match (left.cost, asked.max_cost) {
            (None, asked) => asked,
            (Some(left), Some(asked)) if asked > left => {
                return Err(Unaffordable::Cost {
                    asked: Some(asked),
                    left,
                });
            }
            (Some(left), None) if left <= 0.0 => {
                return Err(Unaffordable::Cost { asked: None, left });
            }
            (Some(_), Some(asked)) => Some(asked),
            (Some(left), None) => Some(left),
        };
        let budget = Budget {
            max_turns: turns,
            max_cost: cost,
        };
        let id = ReservationId(self.next_id);
        self.next_id += 1;
        self.outstanding.insert(id, budget);
        Ok((id, budget))
    }

    /// The grandchild of `id` ended having spent `spent`: its reservation
    /// is released and what it spent is counted instead.
    pub(in crate::run) fn settle(&mut self, id: ReservationId, spent: &Usage) {
        if self.outstanding.remove(&id).is_some() {
            self.nested_spent.add(spent);
        }
    }

    /// What the subagents that ended spent, all together.
    pub(in crate::run) fn nested_spent(&self) -> Usage {
        self.nested_spent
    }
}

#[cfg(test)]
#[path = "reservation_tests.rs"]
mod tests;
