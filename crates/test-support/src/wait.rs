//! Waiting for an event a test cannot be told of (a file appearing, a
//! process leaving `/proc`): polling it, with a deadline that fails the
//! test naming what it waited for. Never a bare sleep in its place.

use std::time::{Duration, Instant};

/// How long [`wait_until`] waits: far beyond any event's time on a loaded
/// machine, so reaching it means the event will not come.
pub const WAIT_LIMIT: Duration = Duration::from_secs(60);

/// How often the condition is checked.
const POLL: Duration = Duration::from_millis(20);

/// Polls `done` until it holds, for at most [`WAIT_LIMIT`]; `what` names
/// the event in the failure.
pub fn wait_until(what: &str, done: impl Fn() -> bool) {
    wait_until_within(what, WAIT_LIMIT, done);
}

/// [`wait_until`] with a deadline of the caller's.
pub fn wait_until_within(what: &str, within: Duration, done: impl Fn() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "waited {within:?} for {what}");
        std::thread::sleep(POLL);
    }
}
