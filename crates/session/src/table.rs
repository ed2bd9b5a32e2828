//! The `sessions ls` table and its `--json` form: one row per run (start,
//! run id, agent, status with its error code or stop note, duration,
//! tokens, cost, the head of the task).
//!
//! In: [`SessionSummary`]s. Out: strings; like [`super::format`], nothing
//! here touches the terminal, and recorded text is shown through
//! [`Style::shown`].

use subagent_protocol::Usage;

use super::display::{Style, cost, format_duration, head};
use super::ending::status_note;
use super::read::{SessionStatus, SessionSummary};

/// Characters of the task shown in the `ls` table.
pub const TASK_HEAD_CHARS: usize = 40;

/// `2026-11-22T12:00:00.123Z` as `2026-11-22 12:00:00`; other forms as given.
fn start_for_table(ts: &str) -> String {
    match (ts.get(0..10), ts.get(11..19)) {
        (Some(d), Some(t)) => format!("{d} {t}"),
        _ => ts.to_owned(),
    }
}

/// The `ls` table, one row per run in the given order, with a header row.
pub fn format_table(sessions: &[SessionSummary], style: Style) -> String {
    const HEADERS: [&str; 8] = [
        "START",
        "RUN ID",
        "AGENT",
        "STATUS",
        "DURATION",
        "TOKENS IN(+CACHED)/OUT",
        "COST",
        "TASK",
    ];
    let rows: Vec<[String; 8]> = sessions
        .iter()
        .map(|s| {
            let note = status_note(s.error.as_ref(), s.stop_reason.as_deref());
            let status = if s.torn && s.status == SessionStatus::Interrupted {
                format!("{} (torn)", s.status.as_str())
            } else if !note.is_empty() {
                format!("{} {}", s.status.as_str(), style.shown(&note))
            } else {
                s.status.as_str().to_owned()
            };
            [
                start_for_table(&s.started_at),
                style.shown(&s.run_id).into_owned(),
                style.shown(&s.agent).into_owned(),
                status,
                s.duration_ms
                    .map(format_duration)
                    .unwrap_or_else(|| "-".into()),
                tokens_cell(&s.usage),
                cost(&s.usage),
                head(&style.shown(&s.task), TASK_HEAD_CHARS),
            ]
        })
        .collect();
    let mut widths = HEADERS.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header: Vec<String> = HEADERS
        .iter()
        .zip(widths)
        .map(|(h, w)| format!("{h:<w$}"))
        .collect();
    out.push_str(&style.bold(header.join("  ").trim_end()));
    for (row, summary) in rows.iter().zip(sessions) {
        out.push('\n');
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (cell, w))| {
                let padded = format!("{cell:<w$}");
                // Colour after padding: escape codes have no width.
                if i == 3 {
                    padded.replacen(summary.status.as_str(), &style.status(summary.status), 1)
                } else {
                    padded
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
    }
    out
}

/// `10/5`, or `10(+93)/5` when the provider's cache handled part of the
/// prompt: input is the prompt tokens billed at the full price, as the
/// result's `usage.input` counts them; cached ones are their own figure.
fn tokens_cell(u: &Usage) -> String {
    match cached_input(u) {
        0 => format!("{}/{}", u.input, u.output),
        cached => format!("{}(+{cached})/{}", u.input, u.output),
    }
}

/// Prompt tokens the provider's cache handled (read from it or written to
/// it): the part of the prompt that `input` leaves out.
pub fn cached_input(u: &Usage) -> u64 {
    u.cache_read.saturating_add(u.cache_write)
}

/// The `ls --json` form: one object per run.
pub fn format_json(sessions: &[SessionSummary]) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(sessions)
}
