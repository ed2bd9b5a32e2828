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

use serde::Deserialize;

use super::lock::{LockedResults, lock_results_file};
pub use super::result_line::{CliExitOf, ResultLine, TaskStatus};
pub use super::results_error::ResultsError;
pub use super::results_writer::ResultsWriter;
use crate::untrusted_file::{CappedLine, CappedLines, UntrustedFileError, open_read};

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
        Some(opened) => collect_scan(path, opened.file),
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
