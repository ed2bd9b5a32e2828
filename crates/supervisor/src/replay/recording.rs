//! A run as `sessions replay` needs it: the header, then one
//! [`RecordedTurn`] per assistant message with the tool calls, tool results
//! and usage of that turn, and how the run ended.
//!
//! In: the items of [`crate::session::read::parse_session`], so a torn last
//! line (a crash mid-write) and line types of a newer writer are skipped the
//! way every reader skips them. Out: plain data; nothing here reads files,
//! talks to a model or runs anything. Both the recorded file and the
//! replay's own file go through [`Recording::from_items`], so the two sides
//! of a comparison are read by the same rules.

use subagent_protocol::Usage;
use subagent_protocol::session::{
    LifecycleStatus, Role, SessionEntry, SessionHeader, ToolCallLine, ToolResultLine,
};

use crate::session::read::ReadItem;

/// One model turn as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedTurn {
    /// The turn number the worker gave it (1-based).
    pub turn: u32,
    /// The assistant text of the turn (may be empty).
    pub text: String,
    /// The provider's stop reason as recorded (may be empty).
    pub stop_reason: String,
    /// The turn's usage (zero when its usage line is missing).
    pub usage: Usage,
    /// Tool calls the model made in this turn, in order.
    pub tool_calls: Vec<ToolCallLine>,
    /// Tool results that followed, in order.
    pub tool_results: Vec<ToolResultLine>,
}

/// A whole session file, read for replay or comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// The `session` header.
    pub header: SessionHeader,
    /// The turns, in file order.
    pub turns: Vec<RecordedTurn>,
    /// How the run ended: `None` when the file has no ending lifecycle line
    /// (still running, or the supervisor died).
    pub status: Option<LifecycleStatus>,
    /// The summary of the ending lifecycle line.
    pub summary: Option<String>,
    /// Lines that were skipped, described for a warning (torn, invalid,
    /// unknown type).
    pub skipped: Vec<String>,
}

/// A session file that cannot be replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordingError {
    /// No `session` header line.
    #[error("the file has no session header line; is it a subagent session file?")]
    NoHeader,
}

impl Recording {
    /// Groups the lines of one session file into turns.
    pub fn from_items(items: &[ReadItem]) -> Result<Self, RecordingError> {
        let mut header = None;
        let mut turns: Vec<RecordedTurn> = Vec::new();
        let mut status = None;
        let mut summary = None;
        let mut skipped = Vec::new();
        for item in items {
            let line = match item {
                ReadItem::Line(line) => line,
                ReadItem::Torn { line_no, bytes } => {
                    skipped.push(format!("line {line_no}: torn ({bytes} bytes, no newline)"));
                    continue;
                }
                ReadItem::Invalid { line_no, error } => {
                    skipped.push(format!("line {line_no}: invalid ({error})"));
                    continue;
                }
                ReadItem::Unknown { line_no, line_type } => {
                    skipped.push(format!(
                        "line {line_no}: unknown type {}",
                        line_type.as_deref().unwrap_or("(none)")
                    ));
                    continue;
                }
            };
            match &line.entry {
                SessionEntry::Session(h) if header.is_none() => header = Some(h.clone()),
                SessionEntry::Message(m) if m.role == Role::Assistant => {
                    turns.push(RecordedTurn {
                        turn: m.turn,
                        text: m.text.clone(),
                        stop_reason: m.stop_reason.clone().unwrap_or_default(),
                        usage: Usage::default(),
                        tool_calls: Vec::new(),
                        tool_results: Vec::new(),
                    });
                }
                SessionEntry::ToolCall(call) => {
                    if let Some(turn) = turn_numbered(&mut turns, call.turn) {
                        turn.tool_calls.push(call.clone());
                    }
                }
                // Results carry no turn number: they follow the calls of the
                // turn they answer, before the next assistant message.
                SessionEntry::ToolResult(result) => {
                    if let Some(turn) = turns.last_mut() {
                        turn.tool_results.push(result.clone());
                    }
                }
                SessionEntry::Usage(u) => {
                    if let Some(turn) = turn_numbered(&mut turns, u.turn) {
                        turn.usage = u.usage;
                    }
                }
                SessionEntry::AgentEvent(event) if event.status.is_some() => {
                    status = event.status;
                    summary.clone_from(&event.summary);
                }
                _ => {}
            }
        }
        Ok(Self {
            header: header.ok_or(RecordingError::NoHeader)?,
            turns,
            status,
            summary,
            skipped,
        })
    }

    /// Tool calls over all turns.
    pub fn tool_call_count(&self) -> usize {
        self.turns.iter().map(|t| t.tool_calls.len()).sum()
    }
}

/// The last turn when it has number `turn`; lines of a turn whose message
/// is missing are dropped rather than given to the wrong turn.
fn turn_numbered(turns: &mut [RecordedTurn], turn: u32) -> Option<&mut RecordedTurn> {
    turns.last_mut().filter(|t| t.turn == turn)
}

#[cfg(test)]
#[path = "recording_tests.rs"]
mod tests;
