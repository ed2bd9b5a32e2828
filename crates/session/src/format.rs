//! Session files for people: the `show`/`tail` transcript (and, through
//! [`super::table`], the `ls` table), as plain text with optional ANSI
//! colour.
//!
//! In: what [`super::read`] parsed. Out: strings; nothing here touches the
//! terminal or decides whether it is one (the caller passes a [`Style`]).
//! What a model, a tool or a file chose (messages, tool names, arguments
//! and output, the task) is stripped of control sequences when the
//! output is a terminal ([`crate::terminal_text::strip_controls`], through
//! [`Style`]).

use serde::Serialize;
use subagent_protocol::session::{
    AgentEvent, Role, SandboxStatus, SessionEntry, SessionHeader, SessionLine,
};
use subagent_protocol::{Limits, Usage};

pub use super::display::{Style, format_duration, head};
pub(super) use super::display::{bytes, clock, cost};
use super::ending::{event_reason_rows, is_cut_by_max_tokens, reason_rows};
use super::read::{ReadItem, SessionStatus, SessionSummary, terminal_status};
pub use super::table::{TASK_HEAD_CHARS, cached_input, format_json, format_table};

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
    for row in reason_lines(&event_reason_rows(e), style) {
        out.push_str(&format!("\n{}", indent(&row)));
    }
    out
}

/// Reason rows as lines: `error  CODE: message`, `limit  maxTurns = 3`,
/// `note   ...`; errors in red, the note in yellow.
fn reason_lines(rows: &[(&'static str, String)], style: Style) -> Vec<String> {
    rows.iter()
        .map(|(name, value)| {
            let row = format!("{name:<6} {}", style.shown(value));
            if *name == "note" {
                style.paint("33", &row)
            } else {
                style.paint("31", &row)
            }
        })
        .collect()
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
                .map(|s| {
                    let cut = if is_cut_by_max_tokens(s) {
                        style.paint("33", ": cut by max_tokens")
                    } else {
                        String::new()
                    };
                    format!(", stop {}{cut}", style.shown(s))
                })
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
        SessionEntry::Changes(c) => style
            .shown(&super::changes_text::changes_text(c))
            .into_owned(),
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
    for row in reason_lines(
        &reason_rows(summary.error.as_ref(), summary.stop_reason.as_deref()),
        style,
    ) {
        out.push('\n');
        out.push_str(&row);
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
