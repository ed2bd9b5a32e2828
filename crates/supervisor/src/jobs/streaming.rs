//! The live view of one job for progress notifications: what its children
//! have done so far (`displayItems`), the tokens and cost they have used
//! (`usage`) and how many model turns they have taken (`turnCount`), built
//! from the supervisor's [`ProgressEvent`]s.
//!
//! Progress events carry names and counts only, never tool arguments or
//! model text (see [`crate::run::ProgressEvent`]), so the display items
//! here are tool calls by name with empty arguments; the text is in the
//! result and the session files. Memory is bounded by [`MAX_DISPLAY_ITEMS`]
//! and the children running. The counting is [`ProgressTally`]'s, the one
//! every live display uses; which children wait for a concurrency slot is
//! kept here, for the job's state.

use std::collections::HashSet;

use serde::Serialize;
use subagent_protocol::result::DisplayItem;

use crate::run::{ProgressEvent, ProgressTally, ProgressUsage};

/// Display items kept per job; later ones are counted, not kept.
pub const MAX_DISPLAY_ITEMS: usize = 200;

/// Usage of a job's children so far, as `streaming.usage` spells it.
pub type StreamingUsage = ProgressUsage;

/// What a progress notification's `details.streaming` holds: the job's
/// [`ProgressTally`] as a client sees it, and its tool calls.
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
    /// The counts the fields above show.
    #[serde(skip)]
    tally: ProgressTally,
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
            ProgressEvent::Queued { run_id, .. } => self.queued.insert(run_id.clone()),
            ProgressEvent::LeftQueue { run_id, .. } => self.queued.remove(run_id),
            ProgressEvent::ToolStarted { name, .. } => {
                if self.display_items.len() >= MAX_DISPLAY_ITEMS {
                    return false;
                }
                self.display_items.push(DisplayItem::ToolCall {
                    name: name.clone(),
                    args: serde_json::Value::Object(serde_json::Map::new()),
                });
                true
            }
            event => {
                match event {
                    ProgressEvent::Started { run_id, .. } => {
                        self.live.insert(run_id.clone());
                    }
                    ProgressEvent::Ended { run_id, .. } => {
                        self.live.remove(run_id);
                        self.queued.remove(run_id);
                    }
                    _ => {}
                }
                if !self.tally.observe(event) {
                    return false;
                }
                self.usage = self.tally.usage();
                self.turn_count = self.tally.turns();
                self.children_started = self.tally.started();
                self.children_ended = self.tally.ended();
                true
            }
        }
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
