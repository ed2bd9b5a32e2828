//! What every live run of this user is doing now, for `subagent ps`: each
//! run keeps a small record of its state in `<sessions dir>/.live/<run id>`
//! while it lives ([`writer`]), and [`reader`] lists the records whose
//! writer is provably alive.
//!
//! A record is believed only when three things hold (why: docs/decisions.md,
//! "Live runs for `subagent ps`"): its MAC holds under this user's session
//! key ([`record`]: a planted or edited file is not a run), a POSIX lock on
//! it is held by the very process the record names ([`lock`]: a run whose
//! supervisor died, even by SIGKILL, holds none), and that process has the
//! start time the record names ([`process`]: a recycled pid is not the
//! writer).
//!
//! Declares and re-exports only. Nothing here touches a session file: the
//! session-file contract is unchanged.

pub mod lock;
pub mod process;
pub mod reader;
pub mod record;
mod spare;
pub mod writer;

pub use reader::{LiveEntry, LiveListing, list_live};
pub use record::{LiveRecord, LiveState};
pub use writer::LiveRun;

/// The directory of live records under a sessions dir.
pub const LIVE_DIR: &str = ".live";
