//! Turn and cost budgets: what has been spent and whether another model
//! turn may start.
//!
//! A budget is checked before each turn, never in the middle of one: a turn
//! that has started is finished and its tool calls are run, so the output it
//! produced is kept. Cost counts only what the price table knows; a model
//! with an unknown price costs 0 here (the loop logs that).

use subagent_protocol::{Budget, StopReason};

/// Spending of one run against its [`Budget`].
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetTracker {
    budget: Budget,
    turns: u32,
    cost: f64,
}

/// Which budget ran out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BudgetExhausted {
    /// `max_turns` model turns were used.
    Turns {
        /// The limit.
        max_turns: u32,
    },
    /// At least `max_cost` dollars were spent.
    Cost {
        /// The limit, US dollars.
        max_cost: f64,
        /// What was spent, US dollars.
        spent: f64,
    },
}

impl BudgetTracker {
    /// Nothing spent yet.
    pub fn new(budget: Budget) -> Self {
        Self {
            budget,
            turns: 0,
            cost: 0.0,
        }
    }

    /// Records one finished model turn that cost `cost` dollars.
    pub fn record_turn(&mut self, cost: f64) {
        self.turns = self.turns.saturating_add(1);
        self.cost += cost;
    }

    /// Records what a nested subagent spent: a parent cannot overspend
    /// through its children, so their turns and cost count as its own.
    pub fn record_nested(&mut self, turns: u32, cost: f64) {
        self.turns = self.turns.saturating_add(turns);
        self.cost += cost;
    }

    /// Model turns used so far (nested subagents' included).
    pub fn turns_used(&self) -> u32 {
        self.turns
    }

    /// Dollars spent so far.
    pub fn cost_spent(&self) -> f64 {
        self.cost
    }

    /// Why no further turn may start, if so. Turns are checked first: when
    /// both ran out, the turn limit is the one a caller can reason about.
    pub fn exhausted(&self) -> Option<BudgetExhausted> {
        if self.turns >= self.budget.max_turns {
            return Some(BudgetExhausted::Turns {
                max_turns: self.budget.max_turns,
            });
        }
        match self.budget.max_cost {
            Some(max_cost) if self.cost >= max_cost => Some(BudgetExhausted::Cost {
                max_cost,
                spent: self.cost,
            }),
            _ => None,
        }
    }
}

impl BudgetExhausted {
    /// The stop reason recorded for it.
    pub fn stop_reason(self) -> StopReason {
        match self {
            BudgetExhausted::Turns { .. } => StopReason::MaxTurns,
            BudgetExhausted::Cost { .. } => StopReason::MaxCost,
        }
    }

    /// What ran out, its value, and how to raise it.
    pub fn message(self) -> String {
        match self {
            BudgetExhausted::Turns { max_turns } => format!(
                "the turn budget ran out: all {max_turns} model turns allowed (max_turns = \
                 {max_turns}) were used before the task finished; the partial output is kept. \
                 Raise max_turns for this agent or call to let it finish"
            ),
            BudgetExhausted::Cost { max_cost, spent } => format!(
                "the cost budget ran out: ${spent:.4} spent of the ${max_cost:.4} allowed \
                 (max_cost = {max_cost}); the partial output is kept. Raise max_cost for this \
                 agent or call to let it finish"
            ),
        }
    }
}

#[cfg(test)]
#[path = "budget_tests.rs"]
mod tests;
