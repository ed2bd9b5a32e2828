//! The lifecycle lines of jobs, and the recovery of runs a dead server left
//! without an ending.
//!
//! In: job facts and results, or the text of a parent session file. Out:
//! [`SessionLine`]s (the same `agent_event` shape the supervisor writes for
//! each child) and appends of `interrupted` endings. The decisions (which
//! starts have no end, what an interrupted line says) are pure functions,
//! tested without files; only [`mark_interrupted`] touches the disk.
//!
//! It never removes or rewrites a line: recovery only appends, and only to
//! files it wrote: a server file or a child's session file is read as
//! untrusted input and appended to only when its chain holds under this
//! user's key ([`crate::session::verified`]) and it is still the file that
//! was read; a child's file must lie under the sessions dir as well. A file
//! planted in `<sessions dir>/serve/`, or a start line naming any other
//! file (an agent file, a shell script), gets nothing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use subagent_protocol::Usage;
use subagent_protocol::result::{ContentItem, SubagentResult};
use subagent_protocol::session::{
    AgentEvent, EndingError, LifecycleEvent, LifecycleStatus, RunMode, SessionEntry, SessionLine,
};

use crate::run::{ending_of, summarize};
use crate::session::append_to_same_blocking;
use crate::session::ending::{ending_error, ending_stop_reason};
use crate::session::read::{ReadItem, parse_session, parse_timestamp};
use crate::session::verified::{VerifiedFile, VerifyError, read_verified};
use crate::untrusted_file::UntrustedFileError;

/// How the summary of an `interrupted` ending begins. The line itself is a
/// `subagent:aborted` with status `aborted` (the session-line schema has no
/// `interrupted` status, and readers that predate it must still see an
/// ending); this prefix is what tells it apart from a cancel.
pub const INTERRUPTED_SUMMARY_PREFIX: &str = "interrupted:";

/// The rest of an interrupted ending's summary.
const INTERRUPTED_SUMMARY: &str = "interrupted: the server running it stopped (killed or crashed) before it ended; marked when the next server started (usage not counted)";

/// A run a previous server left without an ending, now marked interrupted.
#[derive(Debug, Clone, PartialEq)]
pub struct InterruptedRun {
    /// The start line as the previous server wrote it.
    pub start: AgentEvent,
    /// The `interrupted` ending appended for it.
    pub ending: SessionLine,
    /// The parent file it was found in.
    pub parent_file: PathBuf,
}

/// The start line of a job (`subagent:start`, no ending fields).
pub fn job_start_line(
    job_id: &str,
    requested_by: &str,
    agent: &str,
    mode: RunMode,
    model: &str,
    started_at: &str,
) -> SessionLine {
    SessionLine::now(SessionEntry::AgentEvent(AgentEvent {
        event_type: LifecycleEvent::Start,
        job_id: job_id.to_owned(),
        requested_by: requested_by.to_owned(),
        agent_name: agent.to_owned(),
        mode,
        pid: None,
        started_at: started_at.to_owned(),
        completed_at: None,
        duration_ms: None,
        model: model.to_owned(),
        usage: None,
        status: None,
        summary: None,
        session_file: None,
        error: None,
        stop_reason: None,
    }))
}

/// The ending of the job whose start line is `start`, from its result:
/// `subagent:aborted` when it was cancelled, `subagent:error` when it
/// failed, else `subagent:complete`; usage summed over its children; the
/// first child's session file.
pub fn job_end_line(start: &AgentEvent, result: &SubagentResult, duration_ms: u64) -> SessionLine {
    let (event_type, status) = ending_of(result);
    let mut usage = Usage::default();
    for child in &result.details.results {
        usage.add(&child.usage);
    }
    let first = result.details.results.first();
    let summary = match &result.details.error {
        Some(error) => format!("{}: {}", error.code, error.message),
        None => result
            .content
            .iter()
            .map(|ContentItem::Text { text }| text.as_str())
            .find(|t| !t.trim().is_empty())
            .unwrap_or("")
            .to_owned(),
    };
    SessionLine::now(SessionEntry::AgentEvent(AgentEvent {
        event_type,
        completed_at: Some(subagent_protocol::time::now_rfc3339_ms()),
        duration_ms: Some(duration_ms),
        model: first
            .and_then(|c| c.model.clone())
            .unwrap_or_else(|| start.model.clone()),
        usage: Some(usage),
        status: Some(status),
        summary: Some(summarize(&summary)),
        session_file: first.and_then(|c| c.session_file.clone()),
        error: ending_error(result),
        stop_reason: ending_stop_reason(result),
        ..start.clone()
    }))
}

/// True when `line` is an `interrupted` ending written by recovery.
pub fn is_interrupted_line(line: &AgentEvent) -> bool {
    line.event_type == LifecycleEvent::Aborted
        && line
            .summary
            .as_deref()
            .is_some_and(|s| s.starts_with(INTERRUPTED_SUMMARY_PREFIX))
}

/// The start lines of `items` (one file's lines) that no later line ends,
/// in file order. A start whose job id appears again in an ending line is
/// over, whoever wrote the ending.
pub fn unterminated_starts(items: &[ReadItem]) -> Vec<AgentEvent> {
    let mut open: Vec<AgentEvent> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut ended: Vec<bool> = Vec::new();
    for item in items {
        let ReadItem::Line(line) = item else { continue };
        let SessionEntry::AgentEvent(event) = &line.entry else {
            continue;
        };
        match event.event_type {
            LifecycleEvent::Start => {
                index.insert(event.job_id.clone(), open.len());
                open.push(event.clone());
                ended.push(false);
            }
            _ => {
                if let Some(&i) = index.get(&event.job_id) {
                    ended[i] = true;
                }
            }
        }
    }
    open.into_iter()
        .zip(ended)
        .filter_map(|(start, ended)| (!ended).then_some(start))
        .collect()
}

/// The `interrupted` ending of `start`, stamped now.
pub fn interrupted_line(start: &AgentEvent, now: SystemTime) -> SessionLine {
    let duration_ms = parse_timestamp(&start.started_at)
        .and_then(|t| now.duration_since(t).ok())
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    SessionLine {
        entry: SessionEntry::AgentEvent(AgentEvent {
            event_type: LifecycleEvent::Aborted,
            completed_at: Some(subagent_protocol::time::rfc3339_ms(now)),
            duration_ms,
            // Required on endings; what the dead run used is in its usage
            // lines, not known here.
            usage: Some(Usage::default()),
            status: Some(LifecycleStatus::Aborted),
            summary: Some(INTERRUPTED_SUMMARY.to_owned()),
            // The run did not fail of itself, but it did not finish: the
            // reason is the server's end, given as the catch-all code.
            error: Some(EndingError {
                code: subagent_protocol::ErrorCode::SubagentFailed
                    .as_str()
                    .to_owned(),
                message: INTERRUPTED_SUMMARY.to_owned(),
                limit: None,
            }),
            stop_reason: None,
            ..start.clone()
        }),
        timestamp: subagent_protocol::time::rfc3339_ms(now),
    }
}

/// Appends an `interrupted` ending to `parent` for every start in it that
/// has no ending, and to the child's own session file when the start names
/// one under `sessions_dir` that also has no ending. Returns the runs
/// marked. The caller makes sure no live server still writes `parent` (see
/// [`super::Jobs`]'s lock). A `parent` that is missing or empty has nothing
/// to mark; one that is no file subagent wrote is left alone, with a
/// warning in the log.
pub fn mark_interrupted(
    parent: &Path,
    sessions_dir: &Path,
) -> std::io::Result<Vec<InterruptedRun>> {
    let Some(file) = written_by_us(parent) else {
        return Ok(Vec::new());
    };
    let now = SystemTime::now();
    let mut marked = Vec::new();
    for start in unterminated_starts(&parse_session(&file.text())) {
        let ending = interrupted_line(&start, now);
        append_to_same_blocking(parent, file.identity, &ending).map_err(std::io::Error::other)?;
        if let Some(child) = start.session_file.as_deref().map(Path::new) {
            mark_child(child, sessions_dir, &start, &ending);
        }
        marked.push(InterruptedRun {
            start,
            ending,
            parent_file: parent.to_owned(),
        });
    }
    Ok(marked)
}

/// The file at `path` when subagent wrote it (its chain holds); `None`,
/// with a warning unless it is simply missing or empty, when not.
fn written_by_us(path: &Path) -> Option<VerifiedFile> {
    match read_verified(path) {
        Ok(file) => Some(file),
        Err(VerifyError::Untrusted(UntrustedFileError::Io { source, .. }))
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            None
        }
        Err(VerifyError::Empty { .. }) => None,
        Err(e) => {
            tracing::warn!(file = %path.display(), error = %e, "not marking runs in a file subagent did not write");
            None
        }
    }
}

/// The child's own file gets the ending too when it has none: a failure
/// here is logged, not fatal, since the parent file already holds it. "None"
/// means no ending line for the run, whether or not its start line made it
/// to disk: the child's writer is a thread of the dead server and may have
/// died with only the header written. Only a file under `sessions_dir` that
/// subagent wrote is touched.
fn mark_child(child: &Path, sessions_dir: &Path, start: &AgentEvent, ending: &SessionLine) {
    if !lies_under(child, sessions_dir) {
        tracing::warn!(file = %child.display(), sessions_dir = %sessions_dir.display(), "a start line names a child session file outside the sessions dir: left alone");
        return;
    }
    let Some(file) = written_by_us(child) else {
        return;
    };
    if has_ending(&parse_session(&file.text()), &start.job_id) {
        return;
    }
    if let Err(e) = append_to_same_blocking(child, file.identity, ending) {
        tracing::warn!(file = %child.display(), error = %e, "could not mark the child's session file interrupted");
    }
}

/// True when `file`'s directory, links resolved, is `dir` or below it.
fn lies_under(file: &Path, dir: &Path) -> bool {
    let (Some(parent), Ok(dir)) = (file.parent(), std::fs::canonicalize(dir)) else {
        return false;
    };
    std::fs::canonicalize(parent).is_ok_and(|p| p.starts_with(dir))
}

/// True when `items` hold an ending lifecycle line of `job_id`.
pub fn has_ending(items: &[ReadItem], job_id: &str) -> bool {
    items.iter().any(|item| {
        matches!(item, ReadItem::Line(line) if matches!(
            &line.entry,
            SessionEntry::AgentEvent(e) if e.job_id == job_id && e.event_type != LifecycleEvent::Start
        ))
    })
}

#[cfg(test)]
#[path = "lifecycle_tests.rs"]
mod tests;
