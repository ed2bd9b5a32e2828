//! Why a results file cannot be used: shared by the file's reader and
//! writer ([`super::results`]) and its lock ([`super::lock`]), below both.

use std::path::PathBuf;

use crate::untrusted_file::UntrustedFileError;

/// Why the results file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// Reading, truncating, opening or syncing it failed.
    #[error("results file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Another process holds the file's lock: a running `batch` appending
    /// to it, or a `batch merge` replacing it.
    #[error(
        "results file {path} is being written by {} (it holds the file's lock); wait for it \
         to end, or write to another file",
        holder.as_deref().unwrap_or("another process")
    )]
    Locked {
        /// The file.
        path: PathBuf,
        /// Who holds it: `pid N (command line)`, when `/proc/locks` says.
        holder: Option<String>,
    },
    /// The file is not a regular file that can be read line by line: a
    /// link, a FIFO, a line over the cap ([`super::results::RESULT_LINE_CAP`]).
    #[error("results file {0}")]
    Untrusted(UntrustedFileError),
    /// The path stopped naming the file this batch opened: something
    /// renamed a file over it, moved or removed it. The batch's own lines
    /// were copied to `saved`, when that could be done.
    #[error(
        "results file {} was replaced while this batch ran (the path names another file now, \
         or none: something renamed, moved or removed it), so this batch's lines are not in \
         the file there; {}; check both before running the batch again: a re-run skips every \
         id the file at the path holds",
        path.display(),
        match saved {
            Ok(saved) => format!("they were saved to {}", saved.display()),
            Err(why) => format!("they could not be saved ({why})"),
        }
    )]
    Replaced {
        /// The path the batch was given.
        path: PathBuf,
        /// Where the batch's own lines were copied, or why they could not be.
        saved: Result<PathBuf, String>,
    },
    /// A complete line is not a result line.
    #[error(
        "results file {path}, line {line}: not a result line ({message}); \
         remove or fix the line, every line must be a JSON object with an `id`"
    )]
    BadLine {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What the parser said.
        message: String,
    },
}

impl From<UntrustedFileError> for ResultsError {
    fn from(error: UntrustedFileError) -> Self {
        ResultsError::Untrusted(error)
    }
}
