//! What the progress events of a set of runs add up to ([`ProgressTally`]):
//! children started, ended and failed, model turns, tokens and cost, in
//! total and for the children still running; and what one child's events
//! add up to ([`ChildProgress`]: its turn, its live token figures, its
//! cost). Every live display counts with it: the CLI's status line (one
//! [`ChildProgress`] per line), `subagent batch`'s progress bar (the
//! running tasks' usage) and the servers' job progress (`streaming` in
//! serve and MCP status), so a figure means the same thing in each.
//!
//! Pure bookkeeping over [`ProgressEvent`]s: no text, no I/O, never blocks
//! (its callers are progress sinks). Memory is bounded by the children
//! running: an ended child's figures are folded into the totals.
//!
//! A child that waits for a slot (a `queued` state) would be one more
//! count here, next to `started`; there is no such event yet.

use std::collections::HashMap;

use serde::Serialize;
use subagent_protocol::Usage;

use crate::run::progress::events::ProgressEvent;
use crate::run::progress::live_tokens::LiveTokens;

/// Tokens and cost, of one child or summed over several.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressUsage {
    /// Prompt tokens billed at the full price (the result's
    /// `usage.input`): the provider's cache is counted on its own.
    pub input_tokens: u64,
    /// Prompt tokens read from or written to the provider's cache.
    pub cached_input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// US dollars; 0 for unknown or local models.
    pub cost: f64,
}

impl ProgressUsage {
    /// Tokens in and out (the cache's share left out, as the result counts).
    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// The two summed.
    #[must_use]
    pub fn plus(self, other: Self) -> Self {
        Self {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            cached_input_tokens: self
                .cached_input_tokens
                .saturating_add(other.cached_input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            cost: self.cost + other.cost,
        }
    }
}

impl From<&Usage> for ProgressUsage {
    /// A result's usage as the live figures count it.
    fn from(usage: &Usage) -> Self {
        Self {
            input_tokens: usage.input,
            cached_input_tokens: usage.cache_read.saturating_add(usage.cache_write),
            output_tokens: usage.output,
            cost: usage.cost,
        }
    }
}

/// One child's figures so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChildProgress {
    /// The model turn it is on; 0 until the first starts.
    pub turn: u32,
    /// Its tokens, with the estimate of a turn still streaming.
    pub tokens: LiveTokens,
    /// US dollars so far (the run's total, as its last usage report says).
    pub cost: f64,
    /// Its task list (`todo_write`): items done and items; `None` until
    /// it writes one.
    pub todos: Option<(usize, usize)>,
}

impl ChildProgress {
    /// Takes in one event of this child.
    pub fn observe(&mut self, event: &ProgressEvent) {
        self.tokens.on_progress(event);
        match event {
            // Turns only grow; a late or repeated one never turns it back.
            ProgressEvent::Turn { turn, .. } => self.turn = self.turn.max(*turn),
            ProgressEvent::Usage { cost, .. } => self.cost = *cost,
            ProgressEvent::Todos { done, total, .. } => self.todos = Some((*done, *total)),
            _ => {}
        }
    }

    /// Its tokens the provider counted, and its cost.
    pub fn usage(&self) -> ProgressUsage {
        ProgressUsage {
            input_tokens: self.tokens.input,
            cached_input_tokens: self.tokens.cached_input,
            output_tokens: self.tokens.output,
            cost: self.cost,
        }
    }
}

/// The figures of a set of runs (a job, a batch, a call), from their
/// progress events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProgressTally {
    /// Children seen and not ended, by run id.
    running: HashMap<String, ChildProgress>,
    /// Usage of the children that ended.
    ended_usage: ProgressUsage,
    /// Turns of the children that ended.
    ended_turns: u32,
    started: u32,
    ended: u32,
    failed: u32,
}

impl ProgressTally {
    /// Takes in one event of one of the runs. Returns false when it changes
    /// none of the totals (a tool starting or finishing; a task list, which
    /// is kept per child, see [`Self::running_todos`]).
    pub fn observe(&mut self, event: &ProgressEvent) -> bool {
        match event {
            ProgressEvent::Started { run_id, .. } => {
                self.started = self.started.saturating_add(1);
                self.running.entry(run_id.clone()).or_default();
            }
            ProgressEvent::Turn { run_id, .. } | ProgressEvent::Usage { run_id, .. } => {
                self.running
                    .entry(run_id.clone())
                    .or_default()
                    .observe(event);
            }
            // Waiting for a slot is a run's state, not a figure: a job's
            // view keeps it (`jobs::Streaming`).
            ProgressEvent::Todos { run_id, .. } => {
                if let Some(child) = self.running.get_mut(run_id) {
                    child.observe(event);
                }
                return false;
            }
            ProgressEvent::ToolStarted { .. }
            | ProgressEvent::ToolFinished { .. }
            | ProgressEvent::Queued { .. }
            | ProgressEvent::LeftQueue { .. } => {
                return false;
            }
            ProgressEvent::Ended { run_id, error } => {
                self.ended = self.ended.saturating_add(1);
                if error.is_some() {
                    self.failed = self.failed.saturating_add(1);
                }
                if let Some(child) = self.running.remove(run_id) {
                    self.ended_usage = self.ended_usage.plus(child.usage());
                    self.ended_turns = self.ended_turns.saturating_add(child.turn);
                }
            }
        }
        true
    }

    /// A running child's figures.
    pub fn child(&self, run_id: &str) -> Option<&ChildProgress> {
        self.running.get(run_id)
    }

    /// Children started.
    pub fn started(&self) -> u32 {
        self.started
    }

    /// Children over (their trees gone), whichever way they ended.
    pub fn ended(&self) -> u32 {
        self.ended
    }

    /// Children that ended with an error code.
    pub fn failed(&self) -> u32 {
        self.failed
    }

    /// Model turns of every child: each child's latest, summed.
    pub fn turns(&self) -> u32 {
        self.running.values().fold(self.ended_turns, |sum, child| {
            sum.saturating_add(child.turn)
        })
    }

    /// Tokens and cost of every child.
    pub fn usage(&self) -> ProgressUsage {
        self.ended_usage.plus(self.running_usage())
    }

    /// The task lists of the children still running, summed: items done
    /// and items (`(0, 0)` when none wrote one).
    pub fn running_todos(&self) -> (usize, usize) {
        self.running
            .values()
            .filter_map(|child| child.todos)
            .fold((0, 0), |(done, total), (d, t)| {
                (done.saturating_add(d), total.saturating_add(t))
            })
    }

    /// Tokens and cost of the children still running.
    pub fn running_usage(&self) -> ProgressUsage {
        self.running
            .values()
            .fold(ProgressUsage::default(), |sum, child| {
                sum.plus(child.usage())
            })
    }
}

#[cfg(test)]
#[path = "tally_tests.rs"]
mod tests;
