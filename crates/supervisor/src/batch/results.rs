//! The results file: one JSON line per finished task, appended and fsynced
//! as each task ends, so a supervisor killed at any moment loses no
//! finished result; and the resume set read back from it.
//!
//! A line is written with one `write_all` and then `sync_data`, so after a
//! crash the file is every finished line plus at most one torn line at the
//! end (no trailing newline). Reading drops that torn tail from the file
//! before appending, so the next line does not glue onto it, and its task
//! runs again. A complete line that is not a JSON object with an `id` is
//! refused with its line number: that file was edited by hand, and guessing
//! would run tasks twice or never.
//!
//! The open file holds an exclusive `flock` for as long as the writer
//! lives ([`super::lock`]): two batches appending to one results file would
//! each run the tasks the other is running, so the second is refused, and so
//! is a `batch merge` into it.
//!
//! The file is read back as untrusted input ([`crate::untrusted_file`]): a
//! link or a FIFO at its name is refused, and lines are read one at a time
//! up to [`RESULT_LINE_CAP`]. Appending is [`ResultsWriter`]'s.
//!
//! Only lines are read back for their `id` and `status`; the other fields
//! are for the caller, so adding or renaming one never breaks resuming an
//! older file (`schemas/batch-line.schema.json` is the line's shape).

use std::collections::HashSet;
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};
use subagent_protocol::result::{ContentItem, SubagentResult};
use subagent_protocol::{ErrorCode, Usage};

use super::lock::{LockedResults, lock_results_file};
pub use super::results_error::ResultsError;
pub use super::results_writer::ResultsWriter;
use crate::exit_codes;
use crate::untrusted_file::{CappedLine, CappedLines, UntrustedFileError, open_read};

/// How a task ended, as the summary counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskStatus {
    /// It succeeded.
    Ok,
    /// It failed (any error but a timeout).
    Failed,
    /// Its wall or idle timeout fired.
    Timeout,
}

/// One line of the results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultLine {
    /// The task's id.
    pub id: String,
    /// ok, failed or timeout.
    pub status: TaskStatus,
    /// What `subagent run` would have exited with for this task: the CLI's
    /// exit (`crate::exit_codes`), not the worker's exit status, which is a
    /// result object's `exitCode`. Written `cliExit`; files written before
    /// the rename say `exitCode`, still read (docs/decisions.md, "Format
    /// changes").
    #[serde(alias = "exitCode")]
    pub cli_exit: i32,
    /// The result's error code, when it failed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error_code: Option<ErrorCode>,
    /// The result's error message, when it failed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// The agent that ran.
    pub agent: String,
    /// The model that answered, when one did.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub model: Option<String>,
    /// The answer's text (sanitized, cut to the return limit, as the result
    /// object carries it).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub output: Option<String>,
    /// Where the full text is when `output` was cut: the result's
    /// `truncated.fullOutputPath`, so a reader of the line alone can find it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub full_output_path: Option<String>,
    /// The structured output, when the task had an output schema.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub structured_output: Option<serde_json::Value>,
    /// Tokens, cost and turns.
    pub usage: Usage,
    /// Wall time of the task in this batch, ms.
    pub duration_ms: u64,
    /// The task's session file, when a worker started.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub session_file: Option<String>,
    /// Complete model turns of an earlier, interrupted run of the task this
    /// run continued from.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub continued_from: Option<u32>,
}

impl ResultLine {
    /// The line for task `id` from its result object.
    pub fn from_result(id: &str, agent: &str, result: &SubagentResult, duration_ms: u64) -> Self {
        let code = result.details.error.as_ref().map(|e| e.code);
        let child = result.details.results.first();
        let content_text = result.content.iter().find_map(|item| {
            let ContentItem::Text { text } = item;
            (!text.is_empty()).then(|| text.clone())
        });
        Self {
            id: id.to_owned(),
            status: match code {
                None => TaskStatus::Ok,
                Some(ErrorCode::SubagentTimeout) => TaskStatus::Timeout,
                Some(_) => TaskStatus::Failed,
            },
            cli_exit: exit_codes::for_error(code),
            error_code: code,
            error: result.details.error.as_ref().map(|e| e.message.clone()),
            agent: child.map_or_else(|| agent.to_owned(), |c| c.agent.clone()),
            model: child.and_then(|c| c.model.clone()),
            output: child.and_then(|c| c.output.clone()).or(content_text),
            full_output_path: child
                .and_then(|c| c.truncated.as_ref())
                .and_then(|t| t.full_output_path.clone()),
            structured_output: child.and_then(|c| c.structured_output.clone()),
            usage: child.map(|c| c.usage).unwrap_or_default(),
            duration_ms,
            session_file: child.and_then(|c| c.session_file.clone()),
            continued_from: child.and_then(|c| c.continued_from),
        }
    }
}

/// A results file as read: its complete lines and whether a torn tail
/// followed them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Scan {
    /// Each complete line's id and its bytes (without the newline), in order.
    pub lines: Vec<(String, Vec<u8>)>,
    /// Bytes up to and including the last newline.
    pub valid_len: u64,
    /// True when bytes without a newline followed (a write cut short).
    pub torn_tail: bool,
}

/// The longest results line read back, 64 MiB: what a worker may send in
/// a whole run by default (`protocol_bytes`), so any line a run with the
/// default limits writes reads back, and a file of gigabytes costs a
/// reader one such line, never the file.
pub const RESULT_LINE_CAP: usize = 64 * 1024 * 1024;

/// Just the id of a line; other fields are not read back.
#[derive(Deserialize)]
struct IdOnly {
    id: String,
}

/// Just the status of a line, to know which recorded tasks failed.
#[derive(Deserialize)]
struct StatusOnly {
    #[serde(default)]
    status: Option<TaskStatus>,
}

/// Where the complete lines end, and whether a torn tail follows.
struct Extent {
    valid_len: u64,
    torn_tail: bool,
}

/// Reads the lines of `reader` one at a time (each at most
/// [`RESULT_LINE_CAP`]), handing each complete one's id and bytes to
/// `each`; `path` is for messages only.
fn scan_lines(
    path: &Path,
    reader: impl Read,
    mut each: impl FnMut(String, &[u8]),
) -> Result<Extent, ResultsError> {
    let mut lines = CappedLines::new(reader, RESULT_LINE_CAP);
    let io = |source| ResultsError::Io {
        path: path.to_owned(),
        source,
    };
    let mut torn_tail = false;
    while let Some(line) = lines.next_line().map_err(io)? {
        match line {
            CappedLine::Line { bytes, .. } if bytes.iter().all(u8::is_ascii_whitespace) => {}
            CappedLine::Line { number, bytes } => {
                let parsed: IdOnly =
                    serde_json::from_slice(bytes).map_err(|e| ResultsError::BadLine {
                        path: path.to_owned(),
                        line: number,
                        message: e.to_string(),
                    })?;
                each(parsed.id, bytes);
            }
            CappedLine::TooLong { number } => {
                return Err(UntrustedFileError::LineTooLong {
                    path: path.to_owned(),
                    line: number,
                    cap: RESULT_LINE_CAP as u64,
                }
                .into());
            }
            CappedLine::Torn { .. } => torn_tail = true,
        }
    }
    Ok(Extent {
        valid_len: lines.complete_len(),
        torn_tail,
    })
}

/// Reads the lines of `bytes`; `path` is for messages only.
pub fn scan(path: &Path, bytes: &[u8]) -> Result<Scan, ResultsError> {
    collect_scan(path, bytes)
}

fn collect_scan(path: &Path, reader: impl Read) -> Result<Scan, ResultsError> {
    let mut lines = Vec::new();
    let extent = scan_lines(path, reader, |id, bytes| lines.push((id, bytes.to_vec())))?;
    Ok(Scan {
        lines,
        valid_len: extent.valid_len,
        torn_tail: extent.torn_tail,
    })
}

/// Reads `path` line by line (a missing file reads as empty); a link, a
/// FIFO or anything but a regular file is refused, never followed.
pub fn read_scan(path: &Path) -> Result<Scan, ResultsError> {
    match open_read(path)? {
        Some((file, _)) => collect_scan(path, file),
        None => Ok(Scan::default()),
    }
}

/// What an existing results file says is done.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResultsFile {
    /// Ids with a complete line: not run again.
    pub done: HashSet<String>,
    /// The ids of `done` recorded failed or timed out: a re-run that skips
    /// them still fails (exit 1), so retrying a failed shard cannot turn
    /// it green.
    pub failed: HashSet<String>,
    /// A torn last line was dropped (its task runs again).
    pub dropped_torn_tail: bool,
}

impl ResultsFile {
    /// Opens `path` for appending (created when missing) under an exclusive
    /// lock, reads it, and drops a torn tail from it.
    pub fn open(path: &Path) -> Result<(Self, ResultsWriter), ResultsError> {
        let io = |source| ResultsError::Io {
            path: path.to_owned(),
            source,
        };
        let LockedResults { file, identity } = lock_results_file(path)?;
        // Read under the lock, from the file locked (not the path again),
        // so no other batch appends after the read and no swap is read.
        let mut done = HashSet::new();
        let mut failed = HashSet::new();
        let extent = scan_lines(path, &*file, |id, bytes| {
            // A line whose status cannot be read counts as failed: the
            // batch must not report success for a record it cannot vouch for.
            let ok = serde_json::from_slice::<StatusOnly>(bytes)
                .is_ok_and(|l| l.status == Some(TaskStatus::Ok));
            if !ok {
                failed.insert(id.clone());
            }
            done.insert(id);
        })?;
        if extent.torn_tail {
            file.set_len(extent.valid_len).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
        Ok((
            Self {
                done,
                failed,
                dropped_torn_tail: extent.torn_tail,
            },
            ResultsWriter::new(path, file, identity),
        ))
    }
}

#[cfg(test)]
#[path = "results_tests.rs"]
mod tests;
