//! Session files for people: the `ls` table and the `show`/`tail`
//! transcript, as plain text with optional ANSI colour.
//!
//! In: what [`super::read`] parsed. Out: strings; nothing here touches the
//! terminal or decides whether it is one (the caller passes a [`Style`]).
//! What a model, a tool or a file chose (messages, tool names, arguments
//! and output, the task) is stripped of control sequences when the
//! output is a terminal ([`strip_controls`]).

use std::borrow::Cow;

use serde::Serialize;
use subagent_protocol::session::{
    AgentEvent, Role, SandboxStatus, SessionEntry, SessionHeader, SessionLine,
};
use subagent_protocol::text::prefix_chars;
use subagent_protocol::{Limits, Usage};

use super::read::{ReadItem, SessionStatus, SessionSummary, terminal_status};
use crate::terminal_text::strip_controls;

/// Characters of the task shown in the `ls` table.
pub const TASK_HEAD_CHARS: usize = 40;

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
    fn shown(self, text: &str) -> Cow<'_, str> {
        if self.terminal {
            strip_controls(text)
        } else {
            Cow::Borrowed(text)
        }
    }
    fn paint(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
    fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }
    fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }
    fn status(self, status: SessionStatus) -> String {
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

/// `2026-11-22T12:00:00.123Z` as `2026-11-22 12:00:00`; other forms as given.
fn start_for_table(ts: &str) -> String {
    match (ts.get(0..10), ts.get(11..19)) {
        (Some(d), Some(t)) => format!("{d} {t}"),
        _ => ts.to_owned(),
    }
}

/// The time of day of a line (`12:00:00.123`), for transcript margins.
pub(super) fn clock(ts: &str) -> &str {
    ts.get(11..23).unwrap_or(ts)
}

fn cost(usage: &Usage) -> String {
    format!("${:.4}", usage.cost)
}

/// The `ls` table, one row per run in the given order, with a header row.
pub fn format_table(sessions: &[SessionSummary], style: Style) -> String {
    const HEADERS: [&str; 8] = [
        "START",
        "RUN ID",
        "AGENT",
        "STATUS",
        "DURATION",
        "TOKENS IN/OUT",
        "COST",
        "TASK",
    ];
    let rows: Vec<[String; 8]> = sessions
        .iter()
        .map(|s| {
            let status = if s.torn && s.status == SessionStatus::Interrupted {
                format!("{} (torn)", s.status.as_str())
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
                format!("{}/{}", s.usage.input, s.usage.output),
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

/// The `ls --json` form: one object per run.
pub fn format_json(sessions: &[SessionSummary]) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(sessions)
}

/// The name a serde enum writes (`wall_timeout`, `warn`), for display.
pub(super) fn wire_name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => "?".into(),
    }
}

fn indent(text: &str) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("    ");
        out.push_str(line);
    }
    out
}

/// The worker's own limits on one line (`wall 10m, idle 2m, memory 1.0 GiB, ...`).
pub(super) fn limits_summary(l: &Limits) -> String {
    format!(
        "wall {}, idle {}, memory {}, pids {}, stdout {}, stderr {}, open files {}",
        format_duration(l.wall_timeout_ms),
        format_duration(l.idle_timeout_ms),
        bytes(l.memory_bytes),
        l.pids,
        bytes(l.stdout_bytes),
        bytes(l.stderr_bytes),
        l.open_files,
    )
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

fn sandbox(status: &SandboxStatus) -> String {
    let applied = if status.applied.is_empty() {
        "none".to_owned()
    } else {
        status.applied.join(", ")
    };
    let mut out = format!("applied: {applied}");
    if !status.not_applied.is_empty() {
        let missing: Vec<String> = status
            .not_applied
            .iter()
            .map(|n| format!("{} ({})", n.protection, n.reason))
            .collect();
        out.push_str(&format!("; not applied: {}", missing.join(", ")));
    }
    out
}

fn header(h: &SessionHeader, timestamp: &str, style: Style) -> String {
    let l = &h.limits;
    let mut rows = vec![
        style.bold(&format!("session {}", h.run_id)),
        format!("  agent        {}", style.shown(&h.agent)),
        format!(
            "  model        {} ({})",
            style.shown(&h.model),
            style.shown(&h.provider)
        ),
        format!("  started      {timestamp}"),
        format!("  cwd          {}", style.shown(&h.cwd)),
        format!("  depth        {}", h.depth),
        format!("  limits       {}", limits_summary(l)),
        format!("  sandbox      {}", sandbox(&h.sandbox)),
    ];
    if let Some(tool) = &h.tool_sandbox {
        rows.push(format!("  toolSandbox  {}", sandbox(tool)));
    }
    if let Some(parent) = &h.parent_session {
        rows.push(format!("  parent       {}", style.shown(parent)));
    }
    if let Some(from) = &h.resumed_from {
        rows.push(format!(
            "  resumedFrom  {} after {} turns ({})",
            style.shown(&from.run_id),
            from.turns,
            style.shown(&from.file)
        ));
    }
    rows.push(format!("  task\n{}", indent(&style.shown(&h.task))));
    rows.join("\n")
}

fn lifecycle(e: &AgentEvent, style: Style) -> String {
    let name = wire_name(&e.event_type);
    let mut out = match terminal_status(e) {
        Some(status) => format!("{name} {}", style.status(status)),
        None => name,
    };
    if let Some(pid) = e.pid {
        out.push_str(&format!(" pid {pid}"));
    }
    if let Some(ms) = e.duration_ms {
        out.push_str(&format!(" after {}", format_duration(ms)));
    }
    if let Some(summary) = &e.summary {
        out.push_str(&format!("\n{}", indent(&style.shown(summary))));
    }
    out
}

/// Tokens and cost of one usage (`10 in / 5 out tokens (cache read 0, write 0), $0.0010`).
pub(super) fn usage_text(u: &Usage) -> String {
    format!(
        "{} in / {} out tokens (cache read {}, write {}), {}",
        u.input,
        u.output,
        u.cache_read,
        u.cache_write,
        cost(u)
    )
}

/// One transcript entry: a time margin and the line, possibly several rows.
pub fn format_line(line: &SessionLine, style: Style) -> String {
    let at = style.dim(clock(&line.timestamp));
    let body = match &line.entry {
        SessionEntry::Session(h) => return header(h, &line.timestamp, style),
        SessionEntry::AgentEvent(e) => lifecycle(e, style),
        SessionEntry::Message(m) => {
            let role = match m.role {
                Role::System => style.paint("35", "system"),
                Role::User => style.paint("36", "user"),
                Role::Assistant => style.paint("34", "assistant"),
            };
            let stop = m
                .stop_reason
                .as_ref()
                .map(|s| format!(", stop {s}"))
                .unwrap_or_default();
            format!(
                "{role} (turn {}{stop})\n{}",
                m.turn,
                indent(&style.shown(&m.text))
            )
        }
        SessionEntry::ToolCall(c) => {
            let args = match &c.args {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            format!(
                "{} {} [{}] {}",
                style.paint("33", "tool call"),
                style.shown(&c.name),
                style.shown(&c.call_id),
                style.shown(&args)
            )
        }
        SessionEntry::ToolResult(r) => {
            let label = if r.is_error {
                style.paint("31", "tool error")
            } else {
                style.paint("33", "tool result")
            };
            format!(
                "{label} {} [{}]\n{}",
                style.shown(&r.name),
                style.shown(&r.call_id),
                indent(&style.shown(&r.output))
            )
        }
        SessionEntry::Usage(u) => format!("usage turn {}: {}", u.turn, usage_text(&u.usage)),
        SessionEntry::Output(o) => {
            let cut = if o.truncated { ", truncated" } else { "" };
            format!(
                "{} excerpt ({} seen, {} kept{cut})\n{}",
                wire_name(&o.stream),
                o.bytes_seen,
                o.bytes_kept,
                indent(&style.shown(&o.excerpt))
            )
        }
        SessionEntry::Limit(l) => {
            let detail = l
                .detail
                .as_ref()
                .map(|d| format!(": {}", style.shown(d)))
                .unwrap_or_default();
            style.paint(
                "31",
                &format!(
                    "limit {} ({}) -> {}{detail}",
                    wire_name(&l.limit),
                    l.value,
                    wire_name(&l.action)
                ),
            )
        }
        SessionEntry::Log(l) => format!(
            "log {} [{}] {}",
            wire_name(&l.level),
            wire_name(&l.source),
            style.shown(&l.message)
        ),
    };
    format!("{at} {body}")
}

/// One item as read: a line, or a note about one that was skipped.
pub fn format_item(item: &ReadItem, style: Style) -> String {
    match item {
        ReadItem::Line(line) => format_line(line, style),
        ReadItem::Unknown { line_no, line_type } => style.dim(&format!(
            "(line {line_no}: unknown type {}, skipped)",
            style.shown(line_type.as_deref().unwrap_or("(none)"))
        )),
        ReadItem::Invalid { line_no, error } => {
            style.paint("31", &format!("(line {line_no} does not parse: {error})"))
        }
        ReadItem::Torn { line_no, bytes } => style.paint(
            "33",
            &format!(
                "(line {line_no} is torn: {bytes} bytes without a newline, \
                 as when the writer stopped mid-line; ignored)"
            ),
        ),
    }
}

/// The closing summary of `show`.
pub fn format_closing(summary: &SessionSummary, style: Style) -> String {
    let duration = summary
        .duration_ms
        .map(format_duration)
        .unwrap_or_else(|| "unknown".into());
    let mut out = format!(
        "{} {} after {duration}; {} turns, {}",
        style.bold("status"),
        style.status(summary.status),
        summary.usage.turns,
        usage_text(&summary.usage)
    );
    if summary.status == SessionStatus::Interrupted {
        out.push_str("\n(no ending lifecycle line: still running, or the supervisor died)");
    }
    out
}

/// The whole `show` transcript of a parsed file.
pub fn format_transcript(
    items: &[ReadItem],
    summary: Option<&SessionSummary>,
    style: Style,
) -> String {
    let mut blocks: Vec<String> = items.iter().map(|i| format_item(i, style)).collect();
    match summary {
        Some(s) => blocks.push(format_closing(s, style)),
        None => blocks.push("(no session header line: not a session file?)".into()),
    }
    blocks.join("\n")
}

#[cfg(test)]
#[path = "format_tests.rs"]
mod tests;
