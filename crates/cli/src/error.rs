//! The one place where an error that ends a command becomes an exit
//! status. Commands return `Ok(code)` for every outcome they report
//! themselves (a failed run's code comes from its result,
//! `subagent_supervisor::exit_codes::for_error`); what they cannot report
//! ends here as a [`CliError`].
//!
//! The statuses are the library's (`subagent_supervisor::exit_codes`):
//! this module chooses among them and never defines one.

use std::fmt;

use subagent_supervisor::exit_codes;

use crate::console;

/// Why a command ended without reporting an outcome of its own.
#[derive(Debug)]
pub enum CliError {
    /// The arguments do not parse, or `--help`/`--version` was asked for
    /// (clap prints both).
    Usage(clap::Error),
    /// Nothing could run: bad flags, config, agent or input files (exit 2).
    Input(anyhow::Error),
    /// `doctor` could not finish its probes: something is missing (exit 7).
    Doctor(anyhow::Error),
}

impl CliError {
    /// The exit status this error ends the process with.
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Usage(e) if !e.use_stderr() => exit_codes::OK,
            CliError::Usage(_) | CliError::Input(_) => exit_codes::INVALID_INPUT,
            CliError::Doctor(_) => exit_codes::DOCTOR_MISSING,
        }
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
            CliError::Input(e) | CliError::Doctor(e) => write!(f, "{e:#}"),
        }
    }
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;
