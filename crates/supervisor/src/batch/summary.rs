//! The tally of a batch's recorded tasks and the summary printed at its
//! end: ok, failed and timed-out counts, tokens, cost, and the slowest
//! tasks.
//!
//! Pure: it is fed result lines (what the results file holds, so a resumed
//! batch counts what was recorded, never a task a cancel cut short) and
//! renders text; printing is the caller's. Live figures of the tasks still
//! running are the supervisor's [`crate::run::ProgressTally`]'s; tokens and
//! cost are summed as the same [`ProgressUsage`].

use super::results::{ResultLine, TaskStatus};
use crate::run::ProgressUsage;

/// How many of the slowest tasks the summary names: enough to spot the
/// outliers worth a look, short enough to read at a glance.
const SLOWEST_SHOWN: usize = 3;

/// Counts of the tasks finished so far in this batch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Succeeded.
    pub ok: u64,
    /// Failed (not by timeout).
    pub failed: u64,
    /// Timed out.
    pub timed_out: u64,
    /// Tokens (input as the results' `usage.input`, the cache's share on
    /// its own) and US dollars.
    pub usage: ProgressUsage,
    /// The slowest tasks, slowest first: (id, ms).
    pub slowest: Vec<(String, u64)>,
}

impl Tally {
    /// Counts one finished task.
    pub fn add(&mut self, line: &ResultLine) {
        match line.status {
            TaskStatus::Ok => self.ok += 1,
            TaskStatus::Failed => self.failed += 1,
            TaskStatus::Timeout => self.timed_out += 1,
        }
        self.usage = self.usage.plus(ProgressUsage::from(&line.usage));
        self.slowest.push((line.id.clone(), line.duration_ms));
        // Ties broken by id so the summary does not depend on finish order.
        self.slowest
            .sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        self.slowest.truncate(SLOWEST_SHOWN);
    }

    /// Tasks finished.
    pub fn done(&self) -> u64 {
        self.ok + self.failed + self.timed_out
    }

    /// Tokens in and out.
    pub fn tokens(&self) -> u64 {
        self.usage.tokens()
    }

    /// The end-of-batch summary, one line each; `skipped` tasks were
    /// already in the results file, `not_run` were cut off by a signal.
    pub fn render(&self, skipped: u64, not_run: u64) -> Vec<String> {
        let mut lines = vec![format!(
            "batch: {} ok, {} failed, {} timed out ({} run, {} already in results{})",
            self.ok,
            self.failed,
            self.timed_out,
            self.done(),
            skipped,
            if not_run > 0 {
                format!(", {not_run} not run: cancelled")
            } else {
                String::new()
            }
        )];
        let cached = match self.usage.cached_input_tokens {
            0 => String::new(),
            n => format!(" (+{n} cached)"),
        };
        lines.push(format!(
            "tokens: {} in{cached}, {} out; cost ${:.4}",
            self.usage.input_tokens, self.usage.output_tokens, self.usage.cost
        ));
        if !self.slowest.is_empty() {
            let slowest: Vec<String> = self
                .slowest
                .iter()
                .map(|(id, ms)| format!("{id} ({})", duration_text(*ms)))
                .collect();
            lines.push(format!("slowest: {}", slowest.join(", ")));
        }
        lines
    }
}

/// `53ms` under a second, else `2.5s`: short tasks stay distinguishable.
fn duration_text(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else {
        format!("{:.1}s", ms as f64 / 1000.0)
    }
}

#[cfg(test)]
#[path = "summary_tests.rs"]
mod tests;
