//! Why a results file cannot be used: shared by the file's reader and
//! writer ([`super::results`]) and its lock ([`super::lock`]), below both.

use std::path::PathBuf;

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
