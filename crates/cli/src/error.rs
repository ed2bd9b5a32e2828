//! The errors that end a command before it can report how it ended: the
//! kinds a caller's exit status is chosen from ([`crate::exit`], the one
//! table), each wrapping the cause to print. Commands return
//! `Ok(Ending)` for every outcome they report themselves.

use std::fmt;

use crate::console;

/// Why a command ended without reporting an outcome of its own.
#[derive(Debug)]
pub enum CliError {
    /// The arguments do not parse, or `--help`/`--version` was asked for
    /// (clap prints both).
    Usage(clap::Error),
    /// Nothing could run: bad flags, config, agent or input files.
    Input(anyhow::Error),
    /// `doctor` could not finish its probes: something is missing.
    Doctor(anyhow::Error),
    /// What runs subagents could not start (the async runtime): nothing
    /// ran, and not for the input's sake.
    Runtime(anyhow::Error),
    /// A record could not be written: a run's result to stdout (a full
    /// disk, an I/O error), or a server's own session file and jobs
    /// registry: the caller would not get what it asked for.
    RecordLost(anyhow::Error),
}

/// A command's failure, by the marker its cause chain holds: what runs
/// subagents did not start ([`Unstarted`]), a record that could not be
/// written ([`RecordLost`]); anything else is the input's.
impl From<anyhow::Error> for CliError {
    fn from(error: anyhow::Error) -> Self {
        if error.downcast_ref::<Unstarted>().is_some() {
            CliError::Runtime(error)
        } else if error.downcast_ref::<RecordLost>().is_some() {
            CliError::RecordLost(error)
        } else {
            CliError::Input(error)
        }
    }
}

/// Marks a cause chain (`.context(Unstarted(..))`): what runs subagents
/// could not start, through no fault of the input.
#[derive(Debug, Clone, Copy)]
pub struct Unstarted(pub &'static str);

/// Marks a cause chain (`.context(RecordLost(..))`): a record the caller
/// asked for could not be written.
#[derive(Debug, Clone, Copy)]
pub struct RecordLost(pub &'static str);

/// What a run says when its result cannot be written to stdout.
pub const RESULT_NOT_WRITTEN: &str = "cannot write the result to stdout";

impl fmt::Display for Unstarted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Display for RecordLost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl CliError {
    /// Writes the error where it belongs: clap's usage errors and help as
    /// clap prints them, the others as one line on stderr.
    pub fn report(&self) {
        match self {
            CliError::Usage(e) => {
                let _ = e.print();
            }
            other => console::err(&other.to_string()),
        }
    }
}

impl fmt::Display for CliError {
    /// The whole cause chain on one line (`{:#}`): what failed and why.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(e) => write!(f, "{e}"),
            CliError::Input(e)
            | CliError::Doctor(e)
            | CliError::Runtime(e)
            | CliError::RecordLost(e) => write!(f, "{e:#}"),
        }
    }
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;
