//! Background jobs over one [`crate::Supervisor`]: what `serve --stdio` and
//! `serve --mcp` share. A job is one spawn (a single run, a parallel batch
//! or a chain) known by a [`JobId`]; callers start it in the foreground or
//! the background, ask its status, wait for it, cancel it and list them all,
//! and follow live progress and endings over broadcast channels.
//!
//! Every job's start and end are lifecycle lines in the server's own session
//! file (the parent file; the supervisor writes each child's lines into the
//! child's file and that same parent file), fsynced, so the end of a
//! background run is on disk even when no client is left to hear about it.
//! A server killed before its jobs ended leaves start lines without an end;
//! the next server appends an `interrupted` ending for them
//! ([`mark_interrupted`], [`Jobs::recover_interrupted`]) and reports them
//! in [`Jobs::list`].
//!
//! Declares and re-exports only. It never writes to the terminal and never
//! decides how a client is told about anything: that is the server's job.

mod lifecycle;
mod recovery;
mod registry;
mod server_file;
mod state;
mod streaming;

pub use lifecycle::{
    INTERRUPTED_SUMMARY_PREFIX, InterruptedRun, has_ending, interrupted_line, is_interrupted_line,
    job_end_line, job_start_line, mark_interrupted, unterminated_starts,
};
pub use registry::{JobEnded, JobId, JobProgress, JobRequest, JobStatus, Jobs, JobsError};
pub use state::JobState;
pub use streaming::{MAX_DISPLAY_ITEMS, Streaming, StreamingUsage};
