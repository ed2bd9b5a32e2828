//! Session files: where they live, the one writer that appends to them,
//! and reading them back for people and programs (the CLI's `sessions`
//! commands, the supervisor, any outside reader). Must not run anything:
//! replaying a file, which runs a supervisor, is the supervisor's
//! (`subagent_supervisor::replay`).
//!
//! Declares and re-exports only; see [`paths`], [`writer`], [`read`], [`gc`],
//! [`ending`], [`format`], [`table`], [`html`], [`history`] (a
//! file read back into the conversation a resumed run continues) and
//! [`heads`] (every file's header, for the links between runs); files read
//! back are opened as untrusted input ([`crate::untrusted_file`], at most
//! [`SESSION_FILE_CAP`] bytes) and believed only as far as their [`chain`]
//! (keyed by [`key`]) holds.

pub mod chain;
pub mod changes_text;
pub mod display;
pub mod ending;
pub mod format;
pub mod gc;
pub mod heads;
pub mod history;
pub mod html;
pub mod html_chart;
mod html_frame;
pub mod html_text;
pub mod key;
pub mod paths;
pub mod read;
pub mod run_ids;
pub mod table;
pub mod tail;
pub mod verified;
pub mod writer;

pub mod terminal_text;
pub mod units;
pub mod untrusted_file;
pub mod user_dirs;

pub use paths::{SessionPaths, default_sessions_dir};

/// Largest session file read back, bytes (32 MiB). A resumed conversation
/// goes to the worker in one frame of at most 16 MiB
/// (`subagent_protocol::frame::DEFAULT_MAX_PAYLOAD`), and the rest of a
/// file (usage, logs, output excerpts capped at 50 KiB each) is a fraction
/// of that: a real run's file is a few MiB. Twice the frame leaves room
/// for long runs while a planted file cannot make a reader hold more than
/// this (`sessions ls` reads one file at a time).
pub const SESSION_FILE_CAP: u64 = 32 * 1024 * 1024;
pub use writer::{
    SessionWriter, SessionWriterError, append_to_parent, append_to_parent_blocking,
    append_to_same_blocking,
};
