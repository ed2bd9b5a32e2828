//! Turning what happened to a child into the result object: error code and
//! message, exit code, output (final text or a short diagnostic, never a raw
//! dump), sanitizing and truncation, display items, usage, termination.
//!
//! Pure function of its inputs apart from writing the full output file when
//! text is truncated; it starts nothing and kills nothing. Callers on the
//! async runtime use [`assemble_blocking`].

use std::path::PathBuf;
use std::time::Duration;

use subagent_protocol::result::{
    ContentItem, Details, ErrorInfo, LimitName, LimitReached, SingleResult, SubagentResult,
    TerminationInfo,
};
use subagent_protocol::session::SandboxStatus;
use subagent_protocol::{Budget, ErrorCode, Limits, Outcome, RunMode, StopReason, Usage};
use subagent_sandbox::{ChildExit, RawExit, SpawnError, Termination};

use crate::run::record::events::EventRecord;
use crate::run::record::stop::{self, StopCause};
use crate::sanitize::Sanitizer;
use crate::truncate::truncate_returned;

/// Lines of stderr quoted in a diagnostic.
const DIAGNOSTIC_STDERR_LINES: usize = 20;

/// Characters of partial assistant text quoted in a diagnostic.
const DIAGNOSTIC_PARTIAL_CHARS: usize = 2_000;

/// Everything known about a finished child.
#[derive(Debug, Default)]
pub(in crate::run) struct ChildRun {
    pub outcome: Option<Outcome>,
    pub record: EventRecord,
    pub cause: Option<StopCause>,
    pub exit: Option<ChildExit>,
    pub sandbox: Option<SandboxStatus>,
    /// Set when no worker ran at all.
    pub setup_error: Option<(ErrorCode, String)>,
    /// What the nested subagents this child started spent; added to its
    /// own usage.
    pub nested_usage: Usage,
}

impl ChildRun {
    pub fn setup_failed(message: String) -> Self {
        Self {
            setup_error: Some((ErrorCode::SubagentFailed, message)),
            ..Self::default()
        }
    }

    pub fn spawn_failed(e: &SpawnError) -> Self {
        let code = match e {
            SpawnError::Unsandboxed { .. } => ErrorCode::SubagentSandboxUnavailable,
            _ => ErrorCode::SubagentFailed,
        };
        Self {
            setup_error: Some((code, e.to_string())),
            sandbox: refused_status(e),
            ..Self::default()
        }
    }
}

/// What a refused spawn says about protections: those it could not apply.
pub(in crate::run) fn refused_status(e: &SpawnError) -> Option<SandboxStatus> {
    match e {
        SpawnError::Unsandboxed { missing } => Some(SandboxStatus {
            applied: Vec::new(),
            not_applied: missing.clone(),
        }),
        _ => None,
    }
}

/// The run's identity and settings, for assembly.
#[derive(Debug, Clone)]
pub(in crate::run) struct Assembly {
    pub run_id: String,
    pub agent: String,
    pub task: String,
    pub model: String,
    pub mode: RunMode,
    pub limits: Limits,
    /// The budget the child had (for the limit a failure names).
    pub budget: Budget,
    pub session_file: Option<String>,
    pub full_output_file: PathBuf,
    pub duration: Duration,
    pub sanitizer: Sanitizer,
}

/// A result for a run that failed before a worker started.
pub(in crate::run) fn setup_failure(a: &Assembly, message: String) -> SubagentResult {
    assemble(a, ChildRun::setup_failed(message))
}

/// Text up to this size (bytes) is assembled on the calling task: masking
/// it takes a few microseconds, less than the hand-over to the blocking
/// pool and back (about 0.1 ms here), and nothing is truncated or written.
const INLINE_ASSEMBLY_BYTES: usize = 16 * 1024;

/// Display items up to this count are assembled on the calling task.
const INLINE_ASSEMBLY_ITEMS: usize = 64;

/// [`assemble`] on the runtime's blocking pool: sanitizing and truncating
/// megabytes of text and writing the full output file would otherwise stall
/// one of the few runtime threads every other child shares. Small results
/// (most of them) are assembled in place.
pub(in crate::run) async fn assemble_blocking(a: Assembly, run: ChildRun) -> SubagentResult {
    if is_small(&run, &a) {
        return assemble(&a, run);
    }
    let fallback = a.clone();
    match tokio::task::spawn_blocking(move || assemble(&a, run)).await {
        Ok(result) => result,
        Err(e) => setup_failure(&fallback, format!("assembling the result failed: {e}")),
    }
}

/// True when the run's text is too small to need the blocking pool.
fn is_small(run: &ChildRun, a: &Assembly) -> bool {
    let outcome = run.outcome.as_ref().map_or(0, |o| {
        o.final_text.len()
            + o.structured_output_json.as_ref().map_or(0, String::len)
            + o.error.as_ref().map_or(0, |e| e.message.len())
    });
    let record = run.record.partial_text.len() + run.record.last_assistant_text.len();
    let limit = usize::try_from(a.limits.returned_text_bytes)
        .unwrap_or(usize::MAX)
        .min(INLINE_ASSEMBLY_BYTES);
    outcome + record <= limit && run.record.display_items.len() <= INLINE_ASSEMBLY_ITEMS
}

/// The result object of one child.
pub(in crate::run) fn assemble(a: &Assembly, run: ChildRun) -> SubagentResult {
    let failure = classify(a, &run);
    let mut single = SingleResult::new(a.agent.clone(), a.task.clone(), 0);
    single.session_file = a.session_file.clone();
    single.model = Some(
        run.outcome
            .as_ref()
            .map(|o| o.model.clone())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| a.model.clone()),
    );
    single.duration_ms = Some(u64::try_from(a.duration.as_millis()).unwrap_or(u64::MAX));
    single.usage = match &run.outcome {
        Some(o) => o.usage,
        None => run.record.usage,
    };
    single.usage.add(&run.nested_usage);
    single.sandbox = run.sandbox.clone();
    single.todos = run.record.todos.for_result();
    single.stop_reason = Some(RunStop::of(&run).as_str().to_owned());
    if failure.is_some() {
        single.limit =
            crate::run::record::ended_by::limit_reached(crate::run::record::ended_by::EndedBy {
                limits: &a.limits,
                budget: &a.budget,
                cause: run.cause.as_ref(),
                termination: run.exit.as_ref().map(|exit| &exit.termination),
                stop_reason: run.outcome.as_ref().map(|o| o.stop_reason),
            });
    }
    if let Some(exit) = &run.exit {
        single.termination = Some(termination_info(exit));
    }

    let raw_output = match (&run.outcome, &failure) {
        (Some(o), None) => o.final_text.clone(),
        (Some(o), Some(_)) if !o.final_text.is_empty() => o.final_text.clone(),
        _ => diagnostic(&run, failure.as_ref()),
    };
    let output = a.sanitizer.sanitize_returned(&raw_output);
    if let Some(o) = &run.outcome
        && failure.is_none()
    {
        single.structured_output = o
            .structured_output_json
            .as_deref()
            .and_then(|j| serde_json::from_str(&a.sanitizer.mask_secrets(j)).ok());
    }

    let mut error = failure.clone().map(|(code, message)| ErrorInfo {
        code,
        message: a.sanitizer.sanitize_returned(&message),
    });
    let mut content_text = output.clone();
    if let Some(t) = truncate_returned(
        &output,
        a.limits.returned_text_bytes,
        a.limits.returned_text_lines,
        Some(&a.full_output_file.display().to_string()),
    ) {
        let saved = write_full_output(&a.full_output_file, &output);
        let mut info = t.info;
        if !saved {
            info.full_output_path = None;
        }
        content_text = t.text;
        let by_lines = info.original_lines > a.limits.returned_text_lines;
        single.truncated = Some(info);
        if error.is_none() {
            single.limit = Some(if by_lines {
                LimitReached::count(LimitName::ReturnedTextLines, a.limits.returned_text_lines)
            } else {
                LimitReached::count(LimitName::ReturnedTextBytes, a.limits.returned_text_bytes)
            });
            error = Some(ErrorInfo {
                code: ErrorCode::SubagentOutputTruncated,
                message: format!(
                    "output truncated to {} bytes / {} lines; the full output is in {}",
                    a.limits.returned_text_bytes,
                    a.limits.returned_text_lines,
                    a.full_output_file.display()
                ),
            });
        }
    }
    if !run.record.display_items.is_empty() {
        // Another copy of the answer: bounded by the return limit too,
        // naming the full-output file only when it was written.
        let saved = single
            .truncated
            .as_ref()
            .and_then(|t| t.full_output_path.as_deref());
        single.display_items = Some(crate::truncate::bound_display_items(
            run.record.display_items.clone(),
            a.limits.returned_text_bytes,
            a.limits.returned_text_lines,
            saved,
        ));
    }
    // Every copy of the answer in the result is the cut one; the full text
    // is in the full-output file.
    single.output = Some(content_text.clone());
    if let Some((_, message)) = &failure {
        single.error = Some(a.sanitizer.sanitize_returned(message));
        single.exit_code = failure_exit_code(run.exit.as_ref());
    }
    if content_text.is_empty() {
        content_text = "(the subagent finished with no text)".to_owned();
    }
    SubagentResult {
        content: vec![ContentItem::Text { text: content_text }],
        details: Details {
            mode: a.mode.into(),
            run_id: Some(a.run_id.clone()),
            results: vec![single],
            error,
        },
    }
}

/// The error code and message of a run, or `None` for success. The
/// supervisor's own causes come first (it knows why it intervened), then what
/// the sandbox saw, then what the worker reported.
fn classify(a: &Assembly, run: &ChildRun) -> Option<(ErrorCode, String)> {
    if let Some(e) = &run.setup_error {
        return Some(e.clone());
    }
    if let Some(cause) = &run.cause {
        return Some(cause.error(&a.limits));
    }
    let exit = run.exit.as_ref()?;
    if let Some(failure) = stop::termination_error(&exit.termination, &a.limits) {
        return Some(failure);
    }
    match &run.outcome {
        Some(o) => o.error.as_ref().map(|e| (e.code, e.message.clone())),
        None => Some(stop::no_result_error(exit.raw)),
    }
}

/// Why a run stopped, as the result's `stopReason` names it: the
/// supervisor's own cause first, then the worker's reason from `Done`, then
/// how the process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunStop<'a> {
    /// The supervisor intervened.
    Supervisor(&'a StopCause),
    /// The worker's own reason, from `Done`.
    Worker(StopReason),
    /// The worker completed, but the model's output cap cut its last turn.
    MaxTokens,
    /// No `Done`: how the process ended.
    Process(&'a Termination),
    /// No worker ran.
    NotStarted,
}

impl<'a> RunStop<'a> {
    fn of(run: &'a ChildRun) -> Self {
        match (&run.cause, &run.outcome) {
            (Some(cause), _) => Self::Supervisor(cause),
            (None, Some(o))
                if o.stop_reason == StopReason::Completed
                    && run
                        .record
                        .last_stop_reason
                        .as_deref()
                        .is_some_and(crate::session::ending::is_cut_by_max_tokens) =>
            {
                Self::MaxTokens
            }
            (None, Some(o)) => Self::Worker(o.stop_reason),
            (None, None) => match &run.exit {
                Some(exit) => Self::Process(&exit.termination),
                None => Self::NotStarted,
            },
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Self::Supervisor(cause) => cause.stop_word(),
            Self::Worker(reason) => reason.as_str(),
            Self::MaxTokens => crate::session::ending::MAX_TOKENS_STOP,
            Self::Process(termination) => termination.reason(),
            Self::NotStarted => "not_started",
        }
    }
}

/// A short account of a run with no final text: what was last seen, partial
/// text, the error, and the end of stderr. Never the raw event stream.
fn diagnostic(run: &ChildRun, failure: Option<&(ErrorCode, String)>) -> String {
    let mut parts = Vec::new();
    if let Some((code, message)) = failure {
        parts.push(format!("subagent failed ({code}): {message}"));
    } else {
        parts.push("subagent finished without a final answer".to_owned());
    }
    if let Some(last) = run.record.last_event {
        parts.push(format!("last event: {last}"));
    }
    let partial = if run.record.partial_text.is_empty() {
        &run.record.last_assistant_text
    } else {
        &run.record.partial_text
    };
    if !partial.is_empty() {
        let cut = subagent_protocol::text::prefix_chars(partial, DIAGNOSTIC_PARTIAL_CHARS);
        parts.push(format!("partial assistant text:\n{cut}"));
    }
    if let Some(err) = &run.record.last_error_log {
        parts.push(format!("worker error: {err}"));
    }
    if let Some(exit) = &run.exit
        && exit.stderr.bytes_seen > 0
    {
        let text = exit.stderr.lossy_text();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(DIAGNOSTIC_STDERR_LINES)..].join("\n");
        parts.push(format!("stderr (last lines):\n{tail}"));
    }
    parts.join("\n")
}

fn termination_info(exit: &ChildExit) -> TerminationInfo {
    let (exit_status, signal) = match exit.raw {
        RawExit::Exited(code) => (Some(code), None),
        RawExit::Signaled(sig) => (None, Some(sig)),
    };
    TerminationInfo {
        reason: exit.termination.reason().to_owned(),
        exit_status,
        signal,
        leaked_pids: exit.leaked_pids.clone(),
        wall_ms: u64::try_from(exit.usage.wall.as_millis()).unwrap_or(u64::MAX),
        cpu_ms: u64::try_from(exit.usage.cpu.as_millis()).unwrap_or(u64::MAX),
        peak_rss_bytes: exit.usage.peak_rss_bytes,
    }
}

/// Non-zero exit code of a failed run: the worker's own if it failed with
/// one, 128 + signal if killed, else 1.
fn failure_exit_code(exit: Option<&ChildExit>) -> i32 {
    match exit.map(|e| e.raw) {
        Some(RawExit::Exited(code)) if code != 0 => code,
        Some(RawExit::Signaled(sig)) => 128 + sig,
        _ => 1,
    }
}

fn write_full_output(path: &std::path::Path, text: &str) -> bool {
    if let Some(dir) = path.parent()
        && std::fs::create_dir_all(dir).is_err()
    {
        return false;
    }
    std::fs::write(path, text).is_ok()
}

#[cfg(test)]
#[path = "assemble_tests.rs"]
mod tests;
