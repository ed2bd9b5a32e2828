//! The `subagent` command: argument parsing, printing and exit statuses
//! over the `subagent_supervisor` library; everything else is there. A
//! library only so that its binaries (this package's `subagent` and the
//! test suite's copy, which Cargo builds for the suite's own tests) are one
//! line calling [`main`]; nothing else should call into it.

// Terminal output goes through `console`, which survives a closed pipe.
#![deny(clippy::print_stdout, clippy::print_stderr)]
#![forbid(unsafe_code)]

mod agents;
mod batch;
mod call;
mod commands;
mod config;
mod console;
mod doctor;
mod error;
mod exit;
mod install_files;
mod kept_changes;
mod ps;
mod run;
mod run_flags;
mod run_patch;
mod runtime;
mod serve_cmd;
mod sessions;
mod status;
mod trust;

/// The whole program; it exits with the command's status.
pub fn main() -> ! {
    // Frames of many workers are large and short-lived: freed, they must
    // leave resident memory, or the frame budget bounds nothing (see the
    // function). First, before any thread allocates.
    let _ = subagent_sandbox::return_large_frees_to_the_system();
    // Most commands mask text soon (config sources, recorded tasks):
    // compiling the secret patterns takes milliseconds, done meanwhile on a
    // thread of its own while the arguments and config are read.
    subagent_redact::warm_up();
    // A batch of hundreds holds a few fds per live subagent: the soft
    // limit goes up to the hard one (children set their own). A failure
    // leaves the limit as it was; a batch that does not fit says so.
    let _ = subagent_sandbox::raise_open_files_limit();
    let code = commands::main();
    // Spans still queued go to the collector, a few seconds at most.
    subagent_supervisor::telemetry::flush_at_exit();
    // Chores still queued (the isolation probe's child, a cgroup's removal)
    // finish, and the cgroup made ahead for a next child goes: nothing of
    // this program may outlive it.
    subagent_sandbox::finish_chores();
    std::process::exit(code);
}
