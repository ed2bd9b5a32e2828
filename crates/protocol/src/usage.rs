//! Token and cost accounting, shared by the wire (`Outcome`), the result
//! object and session lines. One type, no skipped fields, so it is safe for
//! both bincode and JSON.

use serde::{Deserialize, Serialize};

/// Tokens, cost and turns of one turn or of a whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Prompt tokens billed at the full input price.
    pub input: u64,
    /// Completion tokens.
    pub output: u64,
    /// Prompt tokens served from the provider's cache.
    pub cache_read: u64,
    /// Prompt tokens written to the provider's cache.
    pub cache_write: u64,
    /// Cost in US dollars from the price table; 0 for unknown or local models.
    pub cost: f64,
    /// Model turns (requests that produced an assistant message).
    pub turns: u32,
}

impl Usage {
    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &Usage) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.cost += other.cost;
        self.turns += other.turns;
    }

    /// True when no token was counted.
    pub fn is_empty(&self) -> bool {
        self.input == 0 && self.output == 0 && self.cache_read == 0 && self.cache_write == 0
    }
}

/// Prices of one model in US dollars per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPrice {
    /// Per million input tokens.
    pub input: f64,
    /// Per million output tokens.
    pub output: f64,
    /// Per million cache-read tokens.
    pub cache_read: f64,
    /// Per million cache-write tokens.
    pub cache_write: f64,
}

impl ModelPrice {
    /// The cost of `usage` at these prices.
    pub fn cost_of(&self, usage: &Usage) -> f64 {
        const PER: f64 = 1_000_000.0;
        (usage.input as f64 * self.input
            + usage.output as f64 * self.output
            + usage.cache_read as f64 * self.cache_read
            + usage.cache_write as f64 * self.cache_write)
            / PER
    }
}
