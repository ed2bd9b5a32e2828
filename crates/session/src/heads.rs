//! The header lines of every session file under a sessions dir, read
//! without the rest of each file: how a run finds the runs that continued
//! it (`sessions show`) and a batch re-run finds its tasks' runs.
//!
//! Reads only each file's first line, capped, from a file opened as
//! untrusted input ([`crate::untrusted_file`]); a file that cannot be read, does
//! not start with a header, or whose header's chain value does not hold
//! under this user's key ([`super::verified::verified_first_line`]: a file
//! planted in the sessions dir, or written before files were chained) is
//! skipped. Never writes.

use std::path::{Path, PathBuf};

use subagent_protocol::session::{SessionEntry, SessionHeader, SessionLine};

use crate::untrusted_file::open_read;

/// The runs that continued run `run_id` (whose header names it in
/// `resumedFrom`), as `(run id, file)`, oldest file first: the link back
/// from a recorded run to its continuations, for `sessions show`. Only
/// each file's first line is read; files that cannot be read are skipped.
pub fn continued_by(sessions_dir: &Path, run_id: &str) -> Vec<(String, PathBuf)> {
    session_heads(sessions_dir)
        .into_iter()
        .filter_map(|(file, _, header)| {
            let from = header.resumed_from?;
            (from.run_id == run_id).then_some((header.run_id, file))
        })
        .collect()
}

/// Every session file under `sessions_dir` with its header line's
/// timestamp and header; files whose first line is no header are skipped.
pub fn session_heads(sessions_dir: &Path) -> Vec<(PathBuf, String, SessionHeader)> {
    let Ok(files) = super::read::list_session_files(sessions_dir) else {
        return Vec::new();
    };
    files
        .into_iter()
        .filter_map(|file| {
            let (timestamp, header) = first_header(&file)?;
            Some((file, timestamp, header))
        })
        .collect()
}

/// Longest first line read by [`continued_by`] (1 MiB): a header with a
/// long task, not a whole file of one line.
const MAX_HEADER_LINE: u64 = 1024 * 1024;

/// The header line of `file` and its timestamp, when its chain holds.
pub fn first_header(file: &Path) -> Option<(String, SessionHeader)> {
    use std::io::{BufRead, Read};
    let reader = open_read(file).ok()??.file.take(MAX_HEADER_LINE);
    let mut line = Vec::new();
    std::io::BufReader::new(reader)
        .read_until(b'\n', &mut line)
        .ok()?;
    let line = super::verified::verified_first_line(&line)?;
    let line = serde_json::from_slice::<SessionLine>(line).ok()?;
    match line.entry {
        SessionEntry::Session(header) => Some((line.timestamp, header)),
        _ => None,
    }
}
