//! Small pieces of session text for people, shared by the transcript, the
//! `ls` table, the endings and the HTML page: the terminal [`Style`]
//! (colour, and recorded text stripped of control sequences on a
//! terminal), durations, byte counts, dollars, clock times and the heads
//! of long texts.
//!
//! The lowest of the session display modules: it uses none of them.

use std::borrow::Cow;

use subagent_protocol::Usage;
use subagent_protocol::text::prefix_chars;

use super::read::SessionStatus;
use crate::terminal_text::strip_controls;

/// Whether to colour the output and whether it goes to a terminal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    /// Emit ANSI colour codes.
    pub color: bool,
    /// The output is a terminal: recorded text is stripped of control
    /// sequences.
    pub terminal: bool,
}

impl Style {
    /// Recorded text as it may be shown: stripped of control sequences on
    /// a terminal, as it is otherwise.
    pub(super) fn shown(self, text: &str) -> Cow<'_, str> {
        if self.terminal {
            strip_controls(text)
        } else {
            Cow::Borrowed(text)
        }
    }
    pub(super) fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
    pub(super) fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }
    pub(super) fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }
    pub(super) fn status(self, status: SessionStatus) -> String {
        let code = match status {
            SessionStatus::Completed => "32",
            SessionStatus::Failed => "31",
            SessionStatus::Aborted | SessionStatus::Interrupted => "33",
        };
        self.paint(code, status.as_str())
    }
}

/// A wall time for people: `850ms`, `12.3s`, `4m05s`, `1h02m`.
pub fn format_duration(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms}ms"),
        1_000..60_000 => format!("{:.1}s", ms as f64 / 1_000.0),
        60_000..3_600_000 => format!("{}m{:02}s", ms / 60_000, (ms / 1_000) % 60),
        _ => format!("{}h{:02}m", ms / 3_600_000, (ms / 60_000) % 60),
    }
}

/// The first `max` characters of `text` on one line, `…` when cut.
pub fn head(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .collect();
    let flat = flat.trim();
    if flat.chars().count() <= max {
        return flat.to_owned();
    }
    format!("{}…", prefix_chars(flat, max.saturating_sub(1)))
}

/// The time of day of a line (`12:00:00.123`), for transcript margins.
pub(super) fn clock(ts: &str) -> &str {
    ts.get(11..23).unwrap_or(ts)
}

pub(super) fn cost(usage: &Usage) -> String {
    format!("${:.4}", usage.cost)
}

/// A byte count for people (`512 B`, `1.5 KiB`, `2.0 GiB`).
pub(super) fn bytes(n: u64) -> String {
    const KIB: f64 = 1024.0;
    let f = n as f64;
    if f >= KIB * KIB * KIB {
        format!("{:.1} GiB", f / (KIB * KIB * KIB))
    } else if f >= KIB * KIB {
        format!("{:.1} MiB", f / (KIB * KIB))
    } else if f >= KIB {
        format!("{:.1} KiB", f / KIB)
    } else {
        format!("{n} B")
    }
}
