//! Where a replay first differs from its recording: the tool calls (name,
//! arguments), the tool results (output, error flag), whether the replay
//! wanted more turns than were recorded, the number of turns, and how the
//! run ended.
//!
//! Pure: two [`Recording`]s in, at most one [`Divergence`] out. Call ids
//! are not compared (the replay provider sends the recorded ones back), nor
//! is assistant text (it is the recorded text by construction), nor usage.
//! The session file does not record a run's error code, so outcomes are
//! compared by status; the replay's error is shown beside it.

use serde::Serialize;
use serde_json::Value;
use subagent_protocol::session::{LifecycleStatus, ToolCallLine, ToolResultLine};
use subagent_protocol::text::{floor_char_boundary, shorten_bytes};

use super::recording::Recording;
use crate::session::read::SessionStatus;

/// Bytes of each side shown in a divergence.
pub const EXCERPT_BYTES: usize = 300;

/// When the first difference is further in than this many bytes, the
/// excerpts start [`EXCERPT_LEAD_BYTES`] before it, so the difference is in
/// view rather than cut off after a long common head.
const EXCERPT_SKIP_AFTER: usize = 200;

/// Bytes of common text kept before the difference when the head is skipped.
const EXCERPT_LEAD_BYTES: usize = 80;

/// What differed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DivergenceKind {
    /// A tool call's name or arguments, or a call only one side made.
    ToolCall,
    /// A tool result's output or error flag, or a result only one side has.
    ToolResult,
    /// The replay asked for a turn after the last recorded one.
    RecordingEnded,
    /// The replay ended after a different number of turns.
    Turns,
    /// The run ended differently (completed, failed, aborted).
    Outcome,
}

impl DivergenceKind {
    /// The name the JSON report uses.
    pub fn as_str(self) -> &'static str {
        match self {
            DivergenceKind::ToolCall => "tool_call",
            DivergenceKind::ToolResult => "tool_result",
            DivergenceKind::RecordingEnded => "recording_ended",
            DivergenceKind::Turns => "turns",
            DivergenceKind::Outcome => "outcome",
        }
    }
}

/// The first difference between a recording and its replay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Divergence {
    /// The turn it is in (1-based).
    pub turn: u32,
    /// What differed.
    pub kind: DivergenceKind,
    /// The recorded side, at most [`EXCERPT_BYTES`] of it.
    pub recorded: String,
    /// The replayed side, at most [`EXCERPT_BYTES`] of it.
    pub replayed: String,
}

/// How the replay went, beside its session file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayFacts<'a> {
    /// The replay provider was asked for a turn past the recording.
    pub asked_past_end: bool,
    /// The replay's error (`CODE: message`), when it failed.
    pub error: Option<&'a str>,
}

/// The first difference, in turn order: calls then results of each turn
/// both sides have, then the recording running out, the turn count, and
/// the outcome.
pub fn first_divergence(
    recorded: &Recording,
    replayed: &Recording,
    facts: ReplayFacts<'_>,
) -> Option<Divergence> {
    for (rec, rep) in recorded.turns.iter().zip(&replayed.turns) {
        let turn = rep.turn;
        let calls = rec.tool_calls.len().max(rep.tool_calls.len());
        for i in 0..calls {
            let (a, b) = (rec.tool_calls.get(i), rep.tool_calls.get(i));
            if a.map(call_key) != b.map(call_key) {
                return Some(diverged(
                    turn,
                    DivergenceKind::ToolCall,
                    call_text(a),
                    call_text(b),
                ));
            }
        }
        let results = rec.tool_results.len().max(rep.tool_results.len());
        for i in 0..results {
            let (a, b) = (rec.tool_results.get(i), rep.tool_results.get(i));
            if a.map(result_key) != b.map(result_key) {
                return Some(diverged(
                    turn,
                    DivergenceKind::ToolResult,
                    result_text(a),
                    result_text(b),
                ));
            }
        }
    }
    let recorded_turns = recorded.turns.len();
    let next_turn = u32::try_from(recorded_turns + 1).unwrap_or(u32::MAX);
    if facts.asked_past_end {
        return Some(Divergence {
            turn: next_turn,
            kind: DivergenceKind::RecordingEnded,
            recorded: format!("the recorded run ended after {recorded_turns} turns"),
            replayed: format!("the replay asked for turn {next_turn}"),
        });
    }
    if recorded_turns != replayed.turns.len() {
        let first_missing = recorded_turns.min(replayed.turns.len()) + 1;
        return Some(Divergence {
            turn: u32::try_from(first_missing).unwrap_or(u32::MAX),
            kind: DivergenceKind::Turns,
            recorded: format!("{recorded_turns} turns"),
            replayed: format!("{} turns", replayed.turns.len()),
        });
    }
    if recorded.status != replayed.status {
        let turn = u32::try_from(replayed.turns.len().max(1)).unwrap_or(u32::MAX);
        let recorded_side = outcome_text(recorded.status, recorded.summary.as_deref());
        let replayed_side = outcome_text(replayed.status, facts.error);
        return Some(diverged(
            turn,
            DivergenceKind::Outcome,
            recorded_side,
            replayed_side,
        ));
    }
    None
}

/// The word for a run's ending, as `sessions ls` prints it.
pub fn status_word(status: Option<LifecycleStatus>) -> &'static str {
    status
        .map_or(SessionStatus::Interrupted, SessionStatus::from)
        .as_str()
}

fn call_key(call: &ToolCallLine) -> (&str, &Value) {
    (&call.name, &call.args)
}

fn result_key(result: &ToolResultLine) -> (&str, bool) {
    (&result.output, result.is_error)
}

fn call_text(call: Option<&ToolCallLine>) -> String {
    match call {
        Some(call) => format!("{} {}", call.name, call.args),
        None => "(no call)".to_owned(),
    }
}

fn result_text(result: Option<&ToolResultLine>) -> String {
    match result {
        Some(r) => format!(
            "{} ({}): {}",
            r.name,
            if r.is_error { "error" } else { "ok" },
            r.output
        ),
        None => "(no result)".to_owned(),
    }
}

fn outcome_text(status: Option<LifecycleStatus>, detail: Option<&str>) -> String {
    match detail {
        Some(detail) => format!("{}: {detail}", status_word(status)),
        None => status_word(status).to_owned(),
    }
}

fn diverged(turn: u32, kind: DivergenceKind, recorded: String, replayed: String) -> Divergence {
    let (recorded, replayed) = excerpts(&recorded, &replayed);
    Divergence {
        turn,
        kind,
        recorded,
        replayed,
    }
}

/// Both sides cut to [`EXCERPT_BYTES`], starting a little before their
/// first difference when that is far in (marked with a leading `…`).
fn excerpts(a: &str, b: &str) -> (String, String) {
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let start = if common > EXCERPT_SKIP_AFTER {
        common - EXCERPT_LEAD_BYTES
    } else {
        0
    };
    let cut = |text: &str| {
        let from = floor_char_boundary(text, start);
        let body = shorten_bytes(&text[from..], EXCERPT_BYTES, "…");
        if from > 0 {
            format!("…{body}")
        } else {
            body.into_owned()
        }
    };
    (cut(a), cut(b))
}

#[cfg(test)]
#[path = "divergence_tests.rs"]
mod tests;
