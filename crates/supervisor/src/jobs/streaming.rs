//! The live view of one job for progress notifications: what its children
//! have done so far (`displayItems`), the tokens and cost they have used
//! (`usage`) and how many model turns they have taken (`turnCount`), built
//! from the supervisor's [`ProgressEvent`]s.
//!
//! Progress events carry names and counts only, never tool arguments or
//! model text (see [`crate::run::ProgressEvent`]), so the display items
//! here are tool calls by name with empty arguments; the text is in the
//! result and the session files. Memory is bounded by [`MAX_DISPLAY_ITEMS`].

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use subagent_protocol::result::DisplayItem;

use crate::run::ProgressEvent;

/// Display items kept per job; later ones are counted, not kept.
pub const MAX_DISPLAY_ITEMS: usize = 200;

/// Usage of one child so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamingUsage {
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

/// What a progress notification's `details.streaming` holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Streaming {
    /// Tool calls so far, in order (names only; see the module doc).
    pub display_items: Vec<DisplayItem>,
    /// Tokens and cost of every child of the job so far.
    pub usage: StreamingUsage,
    /// Model turns started by every child of the job so far.
    pub turn_count: u32,
    /// Children started so far.
    pub children_started: u32,
    /// Children over so far.
    pub children_ended: u32,
    #[serde(skip)]
    per_child: HashMap<String, (StreamingUsage, u32)>,
    /// Children waiting for a concurrency slot now, by run id.
    #[serde(skip)]
    queued: HashSet<String>,
    /// Children whose worker runs now, by run id.
    #[serde(skip)]
    live: HashSet<String>,
}

impl Streaming {
    /// Takes in one event of one of the job's children. Returns false when
    /// the event changes nothing a client sees.
    pub fn observe(&mut self, event: &ProgressEvent) -> bool {
        match event {
            ProgressEvent::Queued { run_id, .. } => {
                self.queued.insert(run_id.clone());
            }
            ProgressEvent::LeftQueue { run_id, .. } => {
                self.queued.remove(run_id);
            }
            ProgressEvent::Started { run_id, .. } => {
                self.children_started += 1;
                self.live.insert(run_id.clone());
                self.per_child.entry(run_id.clone()).or_default();
            }
            ProgressEvent::Turn { run_id, turn } => {
                let entry = self.per_child.entry(run_id.clone()).or_default();
                entry.1 = entry.1.max(*turn);
                self.turn_count = self.per_child.values().map(|(_, t)| *t).sum();
            }
            ProgressEvent::ToolStarted { name, .. } => {
                if self.display_items.len() >= MAX_DISPLAY_ITEMS {
                    return false;
                }
                self.display_items.push(DisplayItem::ToolCall {
                    name: name.clone(),
                    args: serde_json::Value::Object(serde_json::Map::new()),
                });
            }
            ProgressEvent::ToolFinished { .. } => return false,
            ProgressEvent::Usage {
                run_id,
                input_tokens,
                cached_input_tokens,
                output_tokens,
                cost,
                ..
            } => {
                let entry = self.per_child.entry(run_id.clone()).or_default();
                entry.0 = StreamingUsage {
                    input_tokens: *input_tokens,
                    cached_input_tokens: *cached_input_tokens,
                    output_tokens: *output_tokens,
                    cost: *cost,
                };
                self.usage =
                    self.per_child
                        .values()
                        .fold(StreamingUsage::default(), |sum, (u, _)| StreamingUsage {
                            input_tokens: sum.input_tokens + u.input_tokens,
                            cached_input_tokens: sum.cached_input_tokens + u.cached_input_tokens,
                            output_tokens: sum.output_tokens + u.output_tokens,
                            cost: sum.cost + u.cost,
                        });
            }
            ProgressEvent::Ended { run_id, .. } => {
                self.children_ended += 1;
                self.live.remove(run_id);
                self.queued.remove(run_id);
            }
        }
        true
    }

    /// True while the job waits for a concurrency slot: a child of it is
    /// queued and none runs (a parallel job with one child running is
    /// running, though its others wait).
    pub fn is_queued(&self) -> bool {
        !self.queued.is_empty() && self.live.is_empty()
    }
}

#[cfg(test)]
#[path = "streaming_tests.rs"]
mod tests;
