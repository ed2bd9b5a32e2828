//! A run's record: its session file (the writer, every line written to
//! it, the terminal lifecycle line and the close) and its lifecycle lines in
//! the parent's session file.
//!
//! It writes only what it is given, already sanitized by its callers or
//! masked there; it never decides outcomes.
//!
//! Its `Drop` is the session file's guard: a run dropped before it finished
//! (the caller's own timeout around it, an aborted task) still ends its file,
//! and the parent's, with a terminal lifecycle line, written before the drop
//! returns.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use subagent_protocol::RunMode;
use subagent_protocol::Usage;
use subagent_protocol::message::LogLevel;
use subagent_protocol::result::SubagentResult;
use subagent_protocol::session::{
    AgentEvent, EndingError, LifecycleEvent, LifecycleStatus, LimitAction, LimitKind, LimitLine,
    LogLine, LogSource, SessionEntry, SessionLine,
};

use crate::request::RunRequest;
use crate::run::record::stop::{LimitHit, ending_of};
use crate::session::ending::{ending_error, ending_stop_reason};
use crate::session::{
    SessionPaths, SessionWriter, SessionWriterError, append_to_parent, append_to_parent_blocking,
};

/// The summary of the terminal line a dropped run gets.
const DROPPED_SUMMARY: &str =
    "the run was dropped by its caller before it finished; its worker was killed";

/// One run's session record and what its lifecycle lines say about it.
pub(in crate::run) struct RunJournal {
    run_id: String,
    requested_by: String,
    agent: String,
    mode: RunMode,
    /// The model asked for; a lifecycle line names the one that answered
    /// when the result says.
    model: String,
    parent_session: Option<PathBuf>,
    started_at: String,
    started: Instant,
    paths: SessionPaths,
    writer: Option<SessionWriter>,
    /// True once the session file exists: a result names it only then.
    created: bool,
    pid: Option<u32>,
    /// The terminal line [`Self::finish`] is writing; a drop part-way
    /// through writes this one rather than an aborted line.
    closing: Option<SessionLine>,
}

/// How a run ended, for its terminal lifecycle line.
struct Ending {
    status: LifecycleStatus,
    model: Option<String>,
    usage: Usage,
    summary: Option<String>,
    /// The code, message and limit of a failed or aborted run.
    error: Option<EndingError>,
    stop_reason: Option<String>,
}

impl Ending {
    fn of(result: &SubagentResult) -> Self {
        let single = result.details.results.first();
        Self {
            status: ending_of(result).1,
            model: single.and_then(|s| s.model.clone()),
            usage: single.map(|s| s.usage).unwrap_or_default(),
            summary: result.content.first().map(|c| match c {
                subagent_protocol::result::ContentItem::Text { text } => summarize(text),
            }),
            error: ending_error(result),
            stop_reason: ending_stop_reason(result),
        }
    }

    fn dropped() -> Self {
        Self {
            status: LifecycleStatus::Aborted,
            model: None,
            usage: Usage::default(),
            summary: Some(DROPPED_SUMMARY.to_owned()),
            error: Some(EndingError {
                code: subagent_protocol::ErrorCode::SubagentCancelled
                    .as_str()
                    .to_owned(),
                message: DROPPED_SUMMARY.to_owned(),
                limit: None,
            }),
            stop_reason: None,
        }
    }
}

impl RunJournal {
    /// The record of `request`'s run `run_id`, its file at `paths` (not yet
    /// created: see [`Self::opened`]).
    pub(in crate::run) fn new(
        run_id: String,
        requested_by: String,
        request: &RunRequest,
        paths: SessionPaths,
        started_at: String,
        started: Instant,
    ) -> Self {
        Self {
            run_id,
            requested_by,
            agent: request.agent.clone(),
            mode: request.mode,
            model: request.provider.model.clone(),
            parent_session: request.parent_session.clone(),
            started_at,
            started,
            paths,
            writer: None,
            created: false,
            pid: None,
            closing: None,
        }
    }

    /// The session file was created: lines go to `writer` from now on.
    pub(in crate::run) fn opened(&mut self, writer: SessionWriter) {
        self.writer = Some(writer);
        self.created = true;
    }

    pub(in crate::run) fn paths(&self) -> &SessionPaths {
        &self.paths
    }

    /// The session file as a result names it, once it exists.
    pub(in crate::run) fn session_file(&self) -> Option<String> {
        self.created
            .then(|| self.paths.session_file.display().to_string())
    }

    /// The worker's pid, for lifecycle lines.
    pub(in crate::run) fn set_pid(&mut self, pid: u32) {
        self.pid = Some(pid);
    }

    /// Appends a line as it is (a worker event's line, already stamped).
    pub(in crate::run) async fn append(&self, line: SessionLine) {
        if let Some(w) = &self.writer {
            let _ = w.append(line).await;
        }
    }

    pub(in crate::run) async fn write(&self, entry: SessionEntry) {
        if let Some(w) = &self.writer {
            // A failed session write must not fail the run; close() reports it.
            let _ = w.append(SessionLine::now(entry)).await;
        }
    }

    pub(in crate::run) async fn log(&self, level: LogLevel, message: String) {
        self.write(SessionEntry::Log(LogLine {
            level,
            source: LogSource::Supervisor,
            message,
        }))
        .await;
    }

    pub(in crate::run) async fn limit(
        &self,
        limit: LimitKind,
        value: u64,
        action: LimitAction,
        detail: Option<String>,
    ) {
        tracing::info!(
            run_id = %self.run_id,
            ?limit,
            value,
            ?action,
            detail = detail.as_deref().unwrap_or(""),
            "limit hit"
        );
        self.write(SessionEntry::Limit(LimitLine {
            limit,
            value,
            action,
            detail,
        }))
        .await;
    }

    /// A `limit` line from the ending table ([`crate::run::record::stop`]).
    pub(in crate::run) async fn limit_hit(&self, hit: LimitHit) {
        self.limit(hit.kind, hit.value, hit.action, hit.detail)
            .await;
    }

    pub(in crate::run) fn lifecycle(
        &self,
        event: LifecycleEvent,
        result: Option<&SubagentResult>,
    ) -> SessionLine {
        self.lifecycle_ending(event, result.map(Ending::of))
    }

    fn lifecycle_ending(&self, event: LifecycleEvent, ending: Option<Ending>) -> SessionLine {
        let ended = ending.is_some();
        let (status, model, usage, summary, error, stop_reason) = match ending {
            Some(e) => (
                Some(e.status),
                e.model,
                Some(e.usage),
                e.summary,
                e.error,
                e.stop_reason,
            ),
            None => (None, None, None, None, None, None),
        };
        SessionLine::now(SessionEntry::AgentEvent(AgentEvent {
            event_type: event,
            job_id: self.run_id.clone(),
            requested_by: self.requested_by.clone(),
            agent_name: self.agent.clone(),
            mode: self.mode,
            pid: self.pid,
            started_at: self.started_at.clone(),
            completed_at: ended.then(subagent_protocol::time::now_rfc3339_ms),
            duration_ms: ended.then(|| duration_ms(self.started.elapsed())),
            model: model.unwrap_or_else(|| self.model.clone()),
            usage,
            status,
            summary,
            session_file: Some(self.paths.session_file.display().to_string()),
            error,
            stop_reason,
        }))
    }

    /// Writes a lifecycle line to the child's file and the parent's.
    pub(in crate::run) async fn lifecycle_line(
        &self,
        event: LifecycleEvent,
        result: Option<&SubagentResult>,
    ) {
        let line = self.lifecycle(event, result);
        self.append_to_parent(&line).await;
        if let Some(w) = &self.writer {
            let _ = w.append(line).await;
        }
    }

    async fn append_to_parent(&self, line: &SessionLine) {
        if let Some(parent) = &self.parent_session
            && let Err(e) = append_to_parent(parent, line).await
        {
            self.log(
                LogLevel::Warn,
                format!("could not append the lifecycle line to the parent session file: {e}"),
            )
            .await;
        }
    }

    /// The ending lifecycle line, then close the session file. Fails when
    /// any line of the file could not be written, flushed or synced: the
    /// caller must then not report the run as done ([`mark_session_lost`]).
    pub(in crate::run) async fn finish(
        &mut self,
        result: &SubagentResult,
    ) -> Result<(), SessionWriterError> {
        let (event, _) = ending_of(result);
        let line = self.lifecycle(event, Some(result));
        self.closing = Some(line.clone());
        self.append_to_parent(&line).await;
        let Some(w) = self.writer.take() else {
            return Ok(());
        };
        // Handed over at once: from here a drop cannot lose the line.
        let closed = w.close_with(line);
        self.closing = None;
        closed.await.map(|_| ()).inspect_err(|e| {
            tracing::error!(run_id = %self.run_id, error = %e, "session file incomplete");
        })
    }
}

/// Turns `result` into a `SUBAGENT_SESSION_LOST` failure: the session file
/// could not be made or completed (`cause`), so whatever the child did, its
/// record is not whole and the run must not be claimed as done (a batch
/// then leaves the task unrecorded, and a resume runs it again). The
/// child's text stays in the result; an earlier error is kept in the message.
pub(in crate::run) fn mark_session_lost(result: &mut SubagentResult, cause: &SessionWriterError) {
    let mut message = format!(
        "the session file was lost: {cause}; the run's record is not whole, so the run is not \
         reported as done. Free space on the sessions dir's disk (or make it writable, or pass \
         another --sessions-dir) and run the task again"
    );
    if let Some(earlier) = &result.details.error {
        message.push_str(&format!(
            " (the run itself ended with {}: {})",
            earlier.code, earlier.message
        ));
    }
    if let Some(single) = result.details.results.first_mut() {
        single.error = Some(message.clone());
        if single.exit_code == 0 {
            single.exit_code = 1;
        }
    }
    result.details.error = Some(subagent_protocol::result::ErrorInfo {
        code: subagent_protocol::ErrorCode::SubagentSessionLost,
        message,
    });
}

impl Drop for RunJournal {
    fn drop(&mut self) {
        let Some(writer) = self.writer.take() else {
            return;
        };
        // Blocking here is bounded by the lines already queued (the writer's
        // queue is bounded) and happens only for a run that was dropped.
        let line = match self.closing.take() {
            // `finish` was appending this line to the parent; that append
            // runs to its end on the blocking pool.
            Some(line) => line,
            None => {
                let line = self.lifecycle_ending(LifecycleEvent::Aborted, Some(Ending::dropped()));
                if let Some(parent) = &self.parent_session {
                    let _ = append_to_parent_blocking(parent, &line);
                }
                line
            }
        };
        if let Err(e) = writer.finish_blocking(line) {
            tracing::error!(run_id = %self.run_id, error = %e, "session file incomplete");
        }
    }
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// First line of the result text, cut to 200 characters, for lifecycle lines.
pub(crate) fn summarize(text: &str) -> String {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    subagent_protocol::text::shorten_chars(first, 200, "…").into_owned()
}
