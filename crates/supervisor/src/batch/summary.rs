//! The tally of a batch as it runs and the summary printed at its end: ok,
//! failed and timed-out counts, tokens, cost, and the slowest tasks.
//!
//! Pure: it is fed result lines and renders text; printing is the caller's.

use super::results::{ResultLine, TaskStatus};

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
    /// Prompt tokens billed at the full price (the results' `usage.input`).
    pub input_tokens: u64,
    /// Prompt tokens read from or written to the provider's cache.
    pub cached_input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// US dollars.
    pub cost: f64,
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
        let u = &line.usage;
        self.input_tokens = self.input_tokens.saturating_add(u.input);
        self.cached_input_tokens = self
            .cached_input_tokens
            .saturating_add(u.cache_read)
            .saturating_add(u.cache_write);
        self.output_tokens = self.output_tokens.saturating_add(u.output);
        self.cost += u.cost;
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
        self.input_tokens.saturating_add(self.output_tokens)
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
        let cached = match self.cached_input_tokens {
            0 => String::new(),
            n => format!(" (+{n} cached)"),
        };
        lines.push(format!(
            "tokens: {} in{cached}, {} out; cost ${:.4}",
            self.input_tokens, self.output_tokens, self.cost
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
