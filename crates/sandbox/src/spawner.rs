//! The one long-lived thread that starts every child (see
//! [`crate::launch`] for the job it runs).
//!
//! The kernel sends PR_SET_PDEATHSIG when the *thread* that forked the child
//! exits, not the process; forking from a tokio blocking-pool thread (which
//! is retired when idle) would kill children at random. This thread lives as
//! long as the process and never runs anything but spawns.

use std::io;

use tokio::sync::oneshot;

use crate::job_thread::{JobThread, Refused};
use crate::unix;

static SPAWNER: JobThread = JobThread::new("subagent-spawner", unix::reserve_low_fds);

/// Runs `start` on the spawner thread and hands back what it returns. When
/// the caller is gone by then (its future was dropped), what `start` made
/// goes to `unclaimed` on the spawner thread instead: a started child must
/// never be left running unowned.
pub(crate) async fn call<T: Send + 'static>(
    start: impl FnOnce() -> io::Result<T> + Send + 'static,
    unclaimed: fn(T),
) -> Result<T, SpawnerError> {
    let (reply, answer) = oneshot::channel();
    let job = Box::new(move || {
        if let Err(Ok(made)) = reply.send(start()) {
            unclaimed(made);
        }
    });
    SPAWNER.submit(job).map_err(|refused| match refused {
        Refused::NoThread(e, _) => SpawnerError::NoThread(e),
        Refused::Gone(_) => SpawnerError::Gone,
    })?;
    answer
        .await
        .map_err(|_| SpawnerError::Gone)?
        .map_err(SpawnerError::Spawn)
}

/// Why the spawner could not start a child.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SpawnerError {
    /// The spawner thread could not be started.
    #[error("cannot start the spawner thread: {0}")]
    NoThread(io::Error),
    /// The spawner thread is gone, or dropped the request.
    #[error("the spawner thread has stopped")]
    Gone,
    /// The spawn itself failed (exec, chdir, the pre-exec hook).
    #[error("{0}")]
    Spawn(io::Error),
}
