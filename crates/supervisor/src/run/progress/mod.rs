//! Step 4, progress: live progress of running children for a caller that
//! shows it as it happens. `events.rs` is what the steps emit
//! ([`events::ProgressEvent`], content events and the sinks), `tally.rs`
//! what a set of runs' events add up to (every display counts with it),
//! `live_tokens.rs` the token figures of one running child.
//!
//! Must not write the session file or decide anything: a display reads,
//! a run never waits on it. Declares only.

pub(super) mod events;
pub(super) mod live_tokens;
pub(super) mod tally;
#[cfg(test)]
pub(crate) mod test_events;
