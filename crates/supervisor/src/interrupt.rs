//! The signals that stop a command's runs: SIGINT and SIGTERM, watched the
//! same way by `run`, `batch`, `call` and both servers.
//!
//! It only waits; what stopping means (cancel every run, drain, exit) is
//! the caller's.

/// Resolves on SIGINT or SIGTERM; false at once if signals cannot be
/// watched (no runtime with signal support).
pub async fn wait_for_interrupt() -> bool {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return false;
    };
    tokio::select! {
        _ = int.recv() => true,
        _ = term.recv() => true,
    }
}
