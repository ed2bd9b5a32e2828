//! What every command that starts subagents sets up the same way: this
//! process as the child subreaper, the small async runtime, and the signals
//! that cancel the runs. Commands differ in what they run, not in this.

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use crate::console;

/// Makes this process the child subreaper (a warning when it cannot:
/// orphaned grandchildren might then be missed) and starts the 2-thread
/// runtime the supervisor runs on.
pub(super) fn supervisor_runtime() -> Result<tokio::runtime::Runtime> {
    if let Err(e) = subagent_sandbox::become_subreaper() {
        console::err(&format!(
            "warning: cannot become a child subreaper ({e}); orphaned grandchildren may be missed"
        ));
    }
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context(crate::error::Unstarted("cannot start the async runtime"))
}

/// Resolves on SIGINT or SIGTERM; false if signals cannot be watched.
pub(super) async fn wait_for_interrupt() -> bool {
    subagent_supervisor::interrupt::wait_for_interrupt().await
}

/// Cancels `cancel` on SIGINT or SIGTERM. Call it inside the runtime.
pub(super) fn cancel_on_interrupt(cancel: &CancellationToken) {
    let on_signal = cancel.clone();
    tokio::spawn(async move {
        if wait_for_interrupt().await {
            on_signal.cancel();
        }
    });
}
