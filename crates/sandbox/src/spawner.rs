//! The one long-lived thread that forks every child.
//!
//! The kernel sends PR_SET_PDEATHSIG when the *thread* that forked the child
//! exits, not the process; forking from a tokio blocking-pool thread (which
//! is retired when idle) would kill children at random. This thread lives as
//! long as the process and never runs anything but spawns.

use std::io;
use std::process::{Child, Command};

use tokio::sync::oneshot;

use crate::job_thread::{JobThread, Refused};
use crate::unix;
use crate::vfork::VforkSpawn;

static SPAWNER: JobThread = JobThread::new("subagent-spawner", unix::reserve_low_fds);

/// Spawns `command` on the spawner thread. The command (and the protocol fd
/// its pre-exec hook owns) is dropped there right after the spawn, closing
/// the parent's copies of the child's fds.
pub(crate) async fn spawn(command: Command) -> Result<Child, SpawnerError> {
    let mut command = command;
    call(move || command.spawn()).await
}

/// Starts a prepared borrowed-memory child on the spawner thread; returns
/// its pid once it has exec'd.
pub(crate) async fn spawn_vfork(child: VforkSpawn) -> Result<u32, SpawnerError> {
    call(move || child.spawn()).await
}

async fn call<T: Send + 'static>(
    start: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> Result<T, SpawnerError> {
    let (reply, answer) = oneshot::channel();
    let job = Box::new(move || {
        let _ = reply.send(start());
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
