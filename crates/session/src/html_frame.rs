//! The frame of the HTML export around the timeline: the run's header
//! (agent, model, limits, sandbox, task) and the closing status with the
//! reason a failed run ended (code, message, limit) or the note on a cut
//! answer.
//!
//! Like the rest of the page, every piece of session text goes through
//! [`escape`]; nothing here loads anything.

use std::fmt::Write as _;

use subagent_protocol::session::{SandboxStatus, SessionHeader};

use super::display::{bytes, format_duration};
use super::ending::reason_rows;
use super::format::{limits_summary, usage_text};
use super::html_text::{escape, text_block};
use super::read::{SessionStatus, SessionSummary};

/// The reason rows of an ending (code and message, limit, cut note) as a
/// list whose items carry their name as a class, so the page shows them
/// next to the status and a test can find them.
pub(super) fn reason_html(rows: &[(&'static str, String)]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from("<dl class=\"reason\">");
    for (name, value) in rows {
        let _ = write!(
            out,
            "<dt>{name}</dt><dd class=\"reason-{name}\">{}</dd>",
            escape(value)
        );
    }
    out.push_str("</dl>");
    out
}

fn sandbox_html(status: &SandboxStatus) -> String {
    let applied = if status.applied.is_empty() {
        "none".to_owned()
    } else {
        escape(&status.applied.join(", "))
    };
    let mut out = format!("<span class=\"applied\">applied: {applied}</span>");
    if !status.not_applied.is_empty() {
        out.push_str("<ul class=\"not-applied\">");
        for n in &status.not_applied {
            let _ = write!(
                out,
                "<li>not applied: <strong>{}</strong> — {}</li>",
                escape(&n.protection),
                escape(&n.reason)
            );
        }
        out.push_str("</ul>");
    }
    out
}

pub(super) fn header_html(h: &SessionHeader, timestamp: &str) -> String {
    let l = &h.limits;
    let limits = format!(
        "{}, tool calls {} / {} / {} pids",
        limits_summary(l),
        format_duration(l.tool_timeout_ms),
        bytes(l.tool_memory_bytes),
        l.tool_pids,
    );
    let mut rows = vec![
        ("agent", escape(&h.agent)),
        ("model", escape(&h.model)),
        ("provider", escape(&h.provider)),
        ("started", escape(timestamp)),
        ("cwd", format!("<code>{}</code>", escape(&h.cwd))),
        ("depth", h.depth.to_string()),
        ("limits", limits),
        ("sandbox", sandbox_html(&h.sandbox)),
    ];
    if let Some(tool) = &h.tool_sandbox {
        rows.push(("tool sandbox", sandbox_html(tool)));
    }
    if let Some(parent) = &h.parent_session {
        rows.push(("parent", format!("<code>{}</code>", escape(parent))));
    }
    rows.push(("task", text_block(&h.task)));
    let mut out = format!(
        "<header id=\"run\"><h1>Run <code>{}</code></h1><dl>",
        escape(&h.run_id)
    );
    for (name, value) in rows {
        let _ = write!(out, "<dt>{name}</dt><dd>{value}</dd>");
    }
    out.push_str("</dl></header>\n");
    out
}

pub(super) fn closing_html(summary: Option<&SessionSummary>, quiet_logs: usize) -> String {
    let mut out = String::from("<footer id=\"closing\">");
    match summary {
        Some(s) => {
            let duration = s
                .duration_ms
                .map(format_duration)
                .unwrap_or_else(|| "unknown".into());
            let _ = write!(
                out,
                "<p><span class=\"label\">status</span> <span class=\"status {0}\">{0}</span> \
                 after {duration}; {1} turns, {2}</p>",
                s.status.as_str(),
                s.usage.turns,
                escape(&usage_text(&s.usage)),
            );
            if s.status == SessionStatus::Interrupted {
                out.push_str(
                    "<p>No ending lifecycle line: still running, or the supervisor died.</p>",
                );
            }
            out.push_str(&reason_html(&reason_rows(
                s.error.as_ref(),
                s.stop_reason.as_deref(),
            )));
        }
        None => out.push_str("<p>No session header line: no status to give.</p>"),
    }
    if quiet_logs > 0 {
        let _ = write!(
            out,
            "<p class=\"meta\">{quiet_logs} debug/info log line(s) not shown; \
             <code>subagent sessions show</code> prints them.</p>"
        );
    }
    out.push_str("</footer>\n");
    out
}
