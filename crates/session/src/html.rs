//! One run's session file as a single self-contained HTML page, for
//! `subagent sessions export --html`: the header, a usage chart, the
//! timeline of turns (assistant text, tool calls and results, limit hits,
//! warnings and errors, lifecycle) and the closing status. The header and
//! the closing are drawn by `html_frame`, the chart by [`super::html_chart`],
//! escaping and folding by [`super::html_text`].
//!
//! In: what [`super::read`] parsed. Out: one string. Nothing here touches
//! a file or the terminal.
//!
//! What it must never do: put text from the session file into the page
//! unescaped (task, model text and tool output are untrusted; every piece
//! goes through [`escape`]), reference anything outside the page (no
//! external URL in `src`, `href` or CSS: the page is mailed around and
//! opened offline), or need JavaScript (there is none; the page's
//! Content-Security-Policy forbids scripts and every load, so even a
//! mistake in escaping could not run or fetch anything).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use subagent_protocol::Usage;
use subagent_protocol::message::LogLevel;
use subagent_protocol::session::{AgentEvent, LimitKind, Role, SessionEntry, SessionLine};

use super::display::{bytes, clock, format_duration};
use super::ending::{event_reason_rows, is_cut_by_max_tokens};
use super::format::{usage_text, wire_name};
pub use super::html_chart::usage_chart;
use super::html_frame::{closing_html, header_html, reason_html};
pub use super::html_text::{COLLAPSE_BYTES, COLLAPSE_LINES, escape, is_long, text_block};
use super::read::{ReadItem, SessionSummary, terminal_status};

/// The whole page for a parsed session file; `summary` is
/// [`super::read::summarize`] of the same items (the closing status and
/// totals).
pub fn render_page(items: &[ReadItem], summary: Option<&SessionSummary>) -> String {
    let timeline = Timeline::build(items);
    let header = items.iter().find_map(|i| match i {
        ReadItem::Line(l) => match &l.entry {
            SessionEntry::Session(h) => Some((h, l.timestamp.as_str())),
            _ => None,
        },
        _ => None,
    });
    let title = match header {
        Some((h, _)) => format!("subagent run {} ({})", h.run_id, h.agent),
        None => "subagent session".to_owned(),
    };
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&title)
    );
    match header {
        Some((h, ts)) => page.push_str(&header_html(h, ts)),
        None => page.push_str(
            "<header id=\"run\"><h1>No session header</h1>\
             <p>This file has no <code>session</code> line: not a session file?</p></header>\n",
        ),
    }
    let _ = writeln!(
        page,
        "<section id=\"usage\"><h2>Tokens per turn</h2>{}\
         <p class=\"legend\"><span class=\"key input\"></span> input \
         <span class=\"key output\"></span> output</p></section>",
        usage_chart(&timeline.usage_by_turn())
    );
    page.push_str("<ol id=\"timeline\">\n");
    for block in &timeline.blocks {
        match block {
            Block::Entry(html) => page.push_str(html),
            Block::Turn { turn, entries } => {
                let _ = writeln!(
                    page,
                    "<li class=\"turn\" id=\"turn-{turn}\" data-turn=\"{turn}\"><h2>Turn {turn}</h2><ol>"
                );
                for e in entries {
                    page.push_str(e);
                }
                page.push_str("</ol></li>\n");
            }
        }
    }
    page.push_str("</ol>\n");
    page.push_str(&closing_html(summary, timeline.quiet_logs));
    page.push_str("</body>\n</html>\n");
    page
}

/// The timeline as built from the lines: entries before the first turn,
/// one block per turn, and entries after the run's ending line.
struct Timeline {
    blocks: Vec<Block>,
    /// Usage lines per turn, summed.
    usage: BTreeMap<u32, Usage>,
    /// debug and info log lines, counted rather than shown.
    quiet_logs: usize,
}

enum Block {
    Entry(String),
    Turn { turn: u32, entries: Vec<String> },
}

impl Timeline {
    fn build(items: &[ReadItem]) -> Self {
        let mut t = Timeline {
            blocks: Vec::new(),
            usage: BTreeMap::new(),
            quiet_logs: 0,
        };
        let mut call_turns: HashMap<&str, u32> = HashMap::new();
        // The turn whose block is open; lines without a turn of their own
        // (results, limits, logs) happened during it.
        let mut open: Option<u32> = None;
        for item in items {
            let line = match item {
                ReadItem::Line(line) => line.as_ref(),
                other => {
                    t.push(open, note(other));
                    continue;
                }
            };
            let turn = match &line.entry {
                SessionEntry::Session(_) => continue,
                SessionEntry::Message(m) => Some(m.turn),
                SessionEntry::ToolCall(c) => {
                    call_turns.insert(c.call_id.as_str(), c.turn);
                    Some(c.turn)
                }
                SessionEntry::ToolResult(r) => call_turns.get(r.call_id.as_str()).copied(),
                SessionEntry::Usage(u) => {
                    t.usage.entry(u.turn).or_default().add(&u.usage);
                    Some(u.turn)
                }
                SessionEntry::AgentEvent(e) if terminal_status(e).is_some() => {
                    // The run is over: what follows is outside every turn.
                    open = None;
                    t.blocks.push(Block::Entry(entry_html(line)));
                    continue;
                }
                SessionEntry::Log(l) if matches!(l.level, LogLevel::Debug | LogLevel::Info) => {
                    t.quiet_logs += 1;
                    continue;
                }
                _ => None,
            };
            // Turn 0 is before the first request; a later line naming an
            // earlier turn is shown where it was written.
            if let Some(n) = turn.filter(|&n| n > 0 && open.is_none_or(|o| n > o)) {
                open = Some(n);
                t.blocks.push(Block::Turn {
                    turn: n,
                    entries: Vec::new(),
                });
            }
            t.push(open, entry_html(line));
        }
        t
    }

    fn push(&mut self, open: Option<u32>, html: String) {
        match (open, self.blocks.last_mut()) {
            (Some(_), Some(Block::Turn { entries, .. })) => entries.push(html),
            _ => self.blocks.push(Block::Entry(html)),
        }
    }

    /// Every turn of the timeline with its usage (zero when none was
    /// recorded), and any turn only a usage line names.
    fn usage_by_turn(&self) -> BTreeMap<u32, Usage> {
        let mut turns = self.usage.clone();
        for block in &self.blocks {
            if let Block::Turn { turn, .. } = block {
                turns.entry(*turn).or_default();
            }
        }
        turns
    }
}

fn li(class: &str, timestamp: &str, label: &str, body: &str) -> String {
    format!(
        "<li class=\"entry {class}\"><span class=\"at\">{}</span> \
         <span class=\"label\">{label}</span>{body}</li>\n",
        escape(clock(timestamp))
    )
}

fn entry_html(line: &SessionLine) -> String {
    let ts = line.timestamp.as_str();
    match &line.entry {
        SessionEntry::Session(_) => String::new(),
        SessionEntry::AgentEvent(e) => li("lifecycle", ts, &lifecycle_label(e), &lifecycle_body(e)),
        SessionEntry::Message(m) => {
            let role = match m.role {
                Role::System => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            let stop = m
                .stop_reason
                .as_ref()
                .map(|s| {
                    let cut = if is_cut_by_max_tokens(s) {
                        " <strong class=\"cut\">cut by max_tokens</strong>"
                    } else {
                        ""
                    };
                    format!(" <span class=\"meta\">stop {}</span>{cut}", escape(s))
                })
                .unwrap_or_default();
            // A turn that only calls tools has no text; its calls follow.
            let body = if m.text.is_empty() {
                String::new()
            } else {
                text_block(&m.text)
            };
            li(
                &format!("message {role}"),
                ts,
                &format!("{role}{stop}"),
                &body,
            )
        }
        SessionEntry::ToolCall(c) => {
            let args = match &c.args {
                serde_json::Value::String(s) => s.clone(),
                other => serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string()),
            };
            li(
                "tool-call",
                ts,
                &format!(
                    "tool call <code class=\"tool-name\">{}</code> <span class=\"meta\">{}</span>",
                    escape(&c.name),
                    escape(&c.call_id)
                ),
                &text_block(&args),
            )
        }
        SessionEntry::ToolResult(r) => {
            let (class, word) = if r.is_error {
                ("tool-result error", "tool error")
            } else {
                ("tool-result", "tool result")
            };
            li(
                class,
                ts,
                &format!(
                    "{word} <code class=\"tool-name\">{}</code> <span class=\"meta\">{}</span>",
                    escape(&r.name),
                    escape(&r.call_id)
                ),
                &text_block(&r.output),
            )
        }
        SessionEntry::Usage(u) => li(
            "usage",
            ts,
            "usage",
            &format!(" <span>{}</span>", escape(&usage_text(&u.usage))),
        ),
        SessionEntry::Output(o) => {
            let cut = if o.truncated { ", truncated" } else { "" };
            li(
                "output",
                ts,
                &format!(
                    "{} excerpt <span class=\"meta\">{} seen, {} kept{cut}</span>",
                    escape(&wire_name(&o.stream)),
                    bytes(o.bytes_seen),
                    bytes(o.bytes_kept)
                ),
                &text_block(&o.excerpt),
            )
        }
        SessionEntry::Limit(l) => {
            let detail = l
                .detail
                .as_ref()
                .map(|d| format!(": {}", escape(d)))
                .unwrap_or_default();
            li(
                "limit",
                ts,
                "limit hit",
                &format!(
                    " <strong class=\"limit-kind\">{}</strong> ({}) → {}{detail}",
                    escape(&wire_name(&l.limit)),
                    limit_value(&l.limit, l.value),
                    escape(&wire_name(&l.action))
                ),
            )
        }
        SessionEntry::Changes(c) => li(
            "changes",
            ts,
            "changes",
            &text_block(&super::changes_text::changes_text(c)),
        ),
        SessionEntry::Log(l) => {
            let level = wire_name(&l.level);
            li(
                &format!("log {}", escape(&level)),
                ts,
                &format!(
                    "{} <span class=\"meta\">{}</span>",
                    escape(&level),
                    escape(&wire_name(&l.source))
                ),
                &text_block(&l.message),
            )
        }
    }
}

/// A limit's value in its unit (see [`LimitKind`]'s variants).
fn limit_value(kind: &LimitKind, value: u64) -> String {
    match kind {
        LimitKind::WallTimeout | LimitKind::IdleTimeout | LimitKind::KillGrace => {
            format_duration(value)
        }
        LimitKind::ProtocolBytes | LimitKind::Stdout | LimitKind::Stderr | LimitKind::Memory => {
            bytes(value)
        }
        LimitKind::Cancel
        | LimitKind::Pids
        | LimitKind::LeakedProcesses
        | LimitKind::Unknown(_) => value.to_string(),
    }
}

fn lifecycle_label(e: &AgentEvent) -> String {
    let name = escape(&wire_name(&e.event_type));
    match terminal_status(e) {
        Some(status) => format!(
            "{name} <span class=\"status {0}\">{0}</span>",
            status.as_str()
        ),
        None => name,
    }
}

fn lifecycle_body(e: &AgentEvent) -> String {
    let mut out = String::new();
    if let Some(pid) = e.pid {
        let _ = write!(out, " <span class=\"meta\">pid {pid}</span>");
    }
    if let Some(ms) = e.duration_ms {
        let _ = write!(
            out,
            " <span class=\"meta\">after {}</span>",
            format_duration(ms)
        );
    }
    if let Some(summary) = &e.summary {
        out.push_str(&text_block(summary));
    }
    out.push_str(&reason_html(&event_reason_rows(e)));
    out
}

fn note(item: &ReadItem) -> String {
    let text = match item {
        ReadItem::Line(_) => return String::new(),
        ReadItem::Unknown { line_no, line_type } => format!(
            "line {line_no}: unknown type {}, skipped",
            line_type.as_deref().unwrap_or("(none)")
        ),
        ReadItem::Invalid { line_no, error } => format!("line {line_no} does not parse: {error}"),
        ReadItem::Torn { line_no, bytes } => format!(
            "line {line_no} is torn: {bytes} bytes without a newline, \
             as when the writer stopped mid-line; ignored"
        ),
    };
    format!("<li class=\"entry note\">{}</li>\n", escape(&text))
}

/// The page's only style sheet, inline so the page stands alone.
const STYLE: &str = "\
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:60em;padding:0 1em;color:#1d1f21;background:#fff}\
h1{font-size:1.4em}h2{font-size:1.05em;margin:.2em 0}\
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em}dt{font-weight:600;color:#555}dd{margin:0}\
pre{white-space:pre-wrap;word-break:break-word;background:#f5f5f5;padding:.5em;margin:.3em 0;border-radius:4px;font-size:12.5px}\
ol{list-style:none;padding-left:0}\
#timeline>li{margin:.4em 0}\
li.turn{border-left:3px solid #4a78c2;padding-left:.8em;margin:1em 0}\
li.entry{margin:.35em 0}\
.at{color:#888;font:12px monospace}.label{font-weight:600}.meta{color:#777;font-weight:400}\
.assistant>.label{color:#2a5db0}.user>.label{color:#17808a}.system>.label{color:#8a3a8a}\
.tool-call>.label,.tool-result>.label{color:#9a6a00}.error>.label,.log.error>.label{color:#b00020}\
li.limit{background:#fdecea;border-left:3px solid #b00020;padding:.3em .5em}li.limit>.label{color:#b00020}\
li.log.warn{background:#fff6e0;padding:.3em .5em}li.note{color:#777;font-style:italic}\
.status{padding:0 .4em;border-radius:3px;color:#fff}\
dl.reason{margin:.3em 0;padding:.3em .5em;background:#fdecea;border-left:3px solid #b00020}\
dd.reason-error,dd.reason-limit{color:#b00020;font-weight:600}dd.reason-note,strong.cut{color:#8a5a00}.status.completed{background:#2e7d32}\
.status.failed{background:#b00020}.status.aborted,.status.interrupted{background:#b26a00}\
.not-applied{margin:.2em 0;padding-left:1.2em;list-style:disc;color:#b00020}\
details.long>summary{cursor:pointer;color:#555}\
#usage-chart .input,.key.input{fill:#9bb7e0;background:#9bb7e0}#usage-chart .output,.key.output{fill:#2a5db0;background:#2a5db0}\
#usage-chart .axis{stroke:#999}#usage-chart text{font:10px sans-serif;fill:#555}\
.key{display:inline-block;width:.8em;height:.8em}\
footer{border-top:1px solid #ddd;margin-top:1.5em;padding-top:.5em}";

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
