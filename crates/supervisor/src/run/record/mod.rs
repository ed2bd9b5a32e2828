//! Step 3, record: what a child did, written down. `events.rs` keeps what
//! the supervisor remembers of a child's events (`todos.rs`: its task
//! list); `journal.rs` writes them to the session file with the lifecycle
//! lines; `stop.rs` is the ending table (why a run stopped -> how the
//! worker is stopped, the kill reason, the limit line, the error), and
//! `ended_by.rs` which limit ended it; `assemble.rs` turns all of it into
//! the result object.
//!
//! Must not spawn, wait on or signal a process: it is handed what
//! happened. Declares only.

pub(super) mod assemble;
pub(super) mod ended_by;
pub(super) mod events;
pub(super) mod journal;
pub(super) mod stop;
pub(super) mod todos;
