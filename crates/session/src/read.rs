//! Reading session files back: parsing lines, summarizing a run, finding a
//! run's file by id, following a file as it grows. Choosing old files for
//! removal is [`super::gc`].
//!
//! In: session files as [`super::writer`] leaves them, possibly cut short by
//! a crash (a torn last line) or written by a newer writer (line types this
//! version does not know, which are skipped per the format rule in
//! `subagent_protocol::session`), or planted by someone else: every file is
//! opened as untrusted input ([`crate::untrusted_file`]: no link followed,
//! regular files only, at most [`SESSION_FILE_CAP`] bytes). Out: typed
//! lines and [`SessionSummary`]s, for showing; whoever acts on a file reads
//! it through [`super::verified`]. Nothing here writes to or deletes a
//! session file.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use subagent_protocol::Usage;
use subagent_protocol::session::{
    AgentEvent, EndingError, LifecycleEvent, LifecycleStatus, SessionEntry, SessionHeader,
    SessionLine,
};

use super::SESSION_FILE_CAP;
use crate::untrusted_file::{UntrustedFileError, open_read_existing, read_opened};

/// The `type` names of [`SessionEntry`]; a line whose type is not here is
/// from a newer writer and is skipped, while a known type that does not
/// parse is reported as invalid.
pub const KNOWN_LINE_TYPES: [&str; 9] = [
    "session",
    "agent_event",
    "message",
    "tool_call",
    "tool_result",
    "usage",
    "output",
    "limit",
    "log",
];

/// What went wrong reading session files.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A file or directory could not be read.
    #[error("read {}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// No file under the sessions dir matches the run id.
    #[error("no session file for run {run_id:?} under {}", sessions_dir.display())]
    NotFound {
        /// What was asked for.
        run_id: String,
        /// Where it was looked for.
        sessions_dir: PathBuf,
    },
    /// A file is not one a session file may be (a link, a FIFO, a
    /// device, too large).
    #[error(transparent)]
    Untrusted(#[from] UntrustedFileError),
    /// The file followed was replaced by another since.
    #[error("{} was replaced by another file while it was followed", path.display())]
    Replaced {
        /// The path.
        path: PathBuf,
    },
    /// Several files match the run id prefix.
    #[error("run id {run_id:?} is ambiguous (give more of its digits); it matches:\n  {}", candidates.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join("\n  "))]
    Ambiguous {
        /// What was asked for.
        run_id: String,
        /// The matching files.
        candidates: Vec<PathBuf>,
    },
}

/// One line of a session file as read.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadItem {
    /// A line this version understands.
    Line(Box<SessionLine>),
    /// A line of a type this version does not know (skipped by rule).
    Unknown {
        /// 1-based line number.
        line_no: usize,
        /// Its `type`, when it has one.
        line_type: Option<String>,
    },
    /// A line of a known type, or not JSON at all, that does not parse.
    Invalid {
        /// 1-based line number.
        line_no: usize,
        /// The parser's complaint.
        error: String,
    },
    /// The last line, cut short without its newline (a crash mid-write).
    Torn {
        /// 1-based line number.
        line_no: usize,
        /// Bytes of the partial line.
        bytes: usize,
    },
}

/// Parses one complete line (without its newline).
pub fn parse_line(line_no: usize, text: &str) -> ReadItem {
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return ReadItem::Invalid {
                line_no,
                error: e.to_string(),
            };
        }
    };
    let line_type = value
        .get("type")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned);
    match serde_json::from_value::<SessionLine>(value) {
        Ok(line) => ReadItem::Line(Box::new(line)),
        Err(e) => match line_type {
            Some(t) if KNOWN_LINE_TYPES.contains(&t.as_str()) => ReadItem::Invalid {
                line_no,
                error: e.to_string(),
            },
            line_type => ReadItem::Unknown { line_no, line_type },
        },
    }
}

/// Parses a whole file's text. A last line without a newline that does not
/// parse is [`ReadItem::Torn`]; one that parses is kept (the writer may have
/// been stopped between the line and its newline, which it writes together,
/// so that is only a hand-edited file).
pub fn parse_session(text: &str) -> Vec<ReadItem> {
    let mut items = Vec::new();
    let ends_with_newline = text.ends_with('\n');
    let pieces: Vec<&str> = text.split('\n').collect();
    let last = pieces.len().saturating_sub(1);
    for (i, piece) in pieces.iter().enumerate() {
        let line_no = i + 1;
        if i == last {
            if ends_with_newline || piece.is_empty() {
                break;
            }
            match parse_line(line_no, piece) {
                ReadItem::Invalid { .. } => items.push(ReadItem::Torn {
                    line_no,
                    bytes: piece.len(),
                }),
                item => items.push(item),
            }
            break;
        }
        if piece.trim().is_empty() {
            continue;
        }
        items.push(parse_line(line_no, piece));
    }
    items
}

/// Reads (as untrusted input) and parses the file at `path`.
pub fn read_session(path: &Path) -> Result<Vec<ReadItem>, ReadError> {
    let bytes = read_opened(path, open_read_existing(path)?, SESSION_FILE_CAP)?;
    Ok(parse_session(&String::from_utf8_lossy(&bytes)))
}

/// How a run ended, as its session file tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SessionStatus {
    /// Ended with `subagent:complete`.
    Completed,
    /// Ended with `subagent:error`.
    Failed,
    /// Ended with `subagent:aborted`.
    Aborted,
    /// No ending lifecycle line: still running, or the supervisor died.
    Interrupted,
}

impl SessionStatus {
    /// The lowercase name, as `--status` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStatus::Completed => "completed",
            SessionStatus::Failed => "failed",
            SessionStatus::Aborted => "aborted",
            SessionStatus::Interrupted => "interrupted",
        }
    }
}

impl From<LifecycleStatus> for SessionStatus {
    fn from(status: LifecycleStatus) -> Self {
        match status {
            LifecycleStatus::Completed => SessionStatus::Completed,
            LifecycleStatus::Failed => SessionStatus::Failed,
            LifecycleStatus::Aborted => SessionStatus::Aborted,
        }
    }
}

/// The ending lifecycle line of `event`, when it is one.
pub fn terminal_status(event: &AgentEvent) -> Option<SessionStatus> {
    let by_event = match event.event_type {
        LifecycleEvent::Start => return None,
        LifecycleEvent::Complete => SessionStatus::Completed,
        LifecycleEvent::Error => SessionStatus::Failed,
        LifecycleEvent::Aborted => SessionStatus::Aborted,
    };
    // The status field, when written, is the writer's own word for it.
    Some(event.status.map_or(by_event, SessionStatus::from))
}

/// True when `item` is an ending lifecycle line (the run is over).
pub fn is_terminal(item: &ReadItem) -> bool {
    match item {
        ReadItem::Line(line) => match &line.entry {
            SessionEntry::AgentEvent(e) => terminal_status(e).is_some(),
            _ => false,
        },
        _ => false,
    }
}

/// One run at a glance, as `subagent sessions ls` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    /// The run id.
    pub run_id: String,
    /// Agent name.
    pub agent: String,
    /// Model id.
    pub model: String,
    /// The task text (as masked in the file).
    pub task: String,
    /// The header's timestamp.
    pub started_at: String,
    /// How the run ended.
    pub status: SessionStatus,
    /// Wall time: the ending line's, else from the first to the last line.
    pub duration_ms: Option<u64>,
    /// The ending line's totals, else the sum of the usage lines.
    pub usage: Usage,
    /// Why it failed or was aborted (code, message, limit), from the
    /// ending line; `None` for a completed run and for endings written
    /// before ending lines carried it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<EndingError>,
    /// The result's `stopReason`, from the ending line (`max_tokens` for a
    /// completed answer the output cap cut).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// The file.
    pub session_file: PathBuf,
    /// True when the last line was torn.
    pub torn: bool,
}

impl SessionSummary {
    /// The start as a time, when the header's timestamp parses.
    pub fn started(&self) -> Option<SystemTime> {
        parse_timestamp(&self.started_at)
    }
}

/// The summary of a parsed file; `None` when it has no header line.
pub fn summarize(path: &Path, items: &[ReadItem]) -> Option<SessionSummary> {
    let lines = || {
        items.iter().filter_map(|i| match i {
            ReadItem::Line(l) => Some(l.as_ref()),
            _ => None,
        })
    };
    let (header, started_at): (&SessionHeader, &str) = lines().find_map(|l| match &l.entry {
        SessionEntry::Session(h) => Some((h, l.timestamp.as_str())),
        _ => None,
    })?;
    let end = lines().find_map(|l| match &l.entry {
        SessionEntry::AgentEvent(e) => terminal_status(e).map(|s| (s, e)),
        _ => None,
    });
    let mut summed = Usage::default();
    for l in lines() {
        if let SessionEntry::Usage(u) = &l.entry {
            summed.add(&u.usage);
        }
    }
    let last_timestamp = lines().next_back().map(|l| l.timestamp.as_str());
    let elapsed = || {
        let start = parse_timestamp(started_at)?;
        let last = parse_timestamp(last_timestamp?)?;
        last.duration_since(start).ok().map(duration_ms)
    };
    let (status, duration, usage, error, stop_reason) = match end {
        Some((status, e)) => (
            status,
            e.duration_ms.or_else(elapsed),
            e.usage.unwrap_or(summed),
            e.error.clone(),
            e.stop_reason.clone(),
        ),
        None => (SessionStatus::Interrupted, elapsed(), summed, None, None),
    };
    Some(SessionSummary {
        run_id: header.run_id.clone(),
        agent: header.agent.clone(),
        model: header.model.clone(),
        task: header.task.clone(),
        started_at: started_at.to_owned(),
        status,
        duration_ms: duration,
        usage,
        error,
        stop_reason,
        session_file: path.to_owned(),
        torn: items.iter().any(|i| matches!(i, ReadItem::Torn { .. })),
    })
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Parses the timestamps session files carry (`2026-11-22T12:00:00.123Z`,
/// RFC 3339 in UTC, fraction optional). Any other form is `None`.
///
/// Written here rather than taken from a date crate: the writer emits one
/// fixed form, and this crate needs nothing else from calendars.
pub fn parse_timestamp(s: &str) -> Option<SystemTime> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(r)?;
        if part.bytes().all(|c| c.is_ascii_digit()) {
            part.parse().ok()
        } else {
            None
        }
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' || b.last() != Some(&b'Z') {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let nanos = match &s[19..s.len() - 1] {
        "" => 0,
        frac => {
            let digits = frac.strip_prefix('.')?;
            if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|c| c.is_ascii_digit())
            {
                return None;
            }
            let padded = format!("{digits:0<9}");
            padded.parse::<u32>().ok()?
        }
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3_600 + minute * 60 + second;
    let secs = u64::try_from(secs).ok()?;
    Some(UNIX_EPOCH + Duration::new(secs, nanos))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Every `*.jsonl` file under `sessions_dir`'s `YYYY/MM/DD` dirs, sorted by
/// path. A missing sessions dir holds no files.
pub fn list_session_files(sessions_dir: &Path) -> Result<Vec<PathBuf>, ReadError> {
    let mut files = Vec::new();
    walk(sessions_dir, 0, &mut files)?;
    files.sort();
    Ok(files)
}

/// Depth 3 is the day dir; files elsewhere are not session files.
fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<(), ReadError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(ReadError::Io {
                path: dir.to_owned(),
                source,
            });
        }
    };
    for entry in entries {
        let entry = entry.map_err(|source| ReadError::Io {
            path: dir.to_owned(),
            source,
        })?;
        let path = entry.path();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if depth < 3 && is_dir {
            walk(&path, depth + 1, out)?;
        } else if depth == 3 && !is_dir && path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
    Ok(())
}

/// Summaries of every readable session file under `sessions_dir`, newest
/// first, and why each unreadable one (a link, a FIFO, a device, one too
/// large, one that vanished) was left out. Files without a header are left
/// out without a word.
pub fn list_sessions(
    sessions_dir: &Path,
) -> Result<(Vec<SessionSummary>, Vec<ReadError>), ReadError> {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for file in list_session_files(sessions_dir)? {
        match read_session(&file) {
            Ok(items) => out.extend(summarize(&file, &items)),
            Err(e) => skipped.push(e),
        }
    }
    // RFC 3339 UTC with a fixed width sorts as text.
    out.sort_by(|a, b| b.started_at.cmp(&a.started_at));
    Ok((out, skipped))
}

/// Which runs `ls` shows.
#[derive(Debug, Clone, Default)]
pub struct SessionFilter {
    /// Only runs started at or after this time.
    pub since: Option<SystemTime>,
    /// Only runs with this status.
    pub status: Option<SessionStatus>,
    /// Only runs of this agent.
    pub agent: Option<String>,
    /// At most this many (the newest).
    pub limit: Option<usize>,
}

impl SessionFilter {
    /// `sessions` (newest first) narrowed by the filter.
    pub fn apply(&self, sessions: Vec<SessionSummary>) -> Vec<SessionSummary> {
        sessions
            .into_iter()
            .filter(|s| self.status.is_none_or(|st| s.status == st))
            .filter(|s| self.agent.as_ref().is_none_or(|a| &s.agent == a))
            .filter(|s| {
                self.since
                    .is_none_or(|since| s.started().is_some_and(|t| t >= since))
            })
            .take(self.limit.unwrap_or(usize::MAX))
            .collect()
    }
}

/// The session file `run` names: an existing file path, or a run id (or a
/// unique prefix of one) matched against file names under `sessions_dir`.
pub fn find_session(sessions_dir: &Path, run: &str) -> Result<PathBuf, ReadError> {
    let as_path = Path::new(run);
    // Anything but a directory at that path is what was named: a FIFO or a
    // link is refused by the open, with what it is, not taken for an id.
    if std::fs::symlink_metadata(as_path).is_ok_and(|m| !m.is_dir()) {
        return Ok(as_path.to_owned());
    }
    let mut candidates: Vec<PathBuf> = list_session_files(sessions_dir)?
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !run.is_empty() && n.starts_with(run))
        })
        .collect();
    if candidates.len() > 1 {
        return Err(ReadError::Ambiguous {
            run_id: run.to_owned(),
            candidates,
        });
    }
    candidates.pop().ok_or_else(|| ReadError::NotFound {
        run_id: run.to_owned(),
        sessions_dir: sessions_dir.to_owned(),
    })
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
