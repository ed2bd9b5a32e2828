//! The one long-lived thread that forks every child.
//!
//! The kernel sends PR_SET_PDEATHSIG when the *thread* that forked the child
//! exits, not the process; forking from a tokio blocking-pool thread (which
//! is retired when idle) would kill children at random. This thread lives as
//! long as the process and never runs anything but spawns.

use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::{Child, Command};
use std::sync::OnceLock;
use std::sync::mpsc;

use tokio::sync::oneshot;

use crate::unix;

type Job = Box<dyn FnOnce() + Send>;

static SPAWNER: OnceLock<Result<mpsc::Sender<Job>, String>> = OnceLock::new();

/// Spawns `command` on the spawner thread. The command (and the protocol fd
/// its pre-exec hook owns) is dropped there right after the spawn, closing
/// the parent's copies of the child's fds.
pub(crate) async fn spawn(command: Command) -> Result<Child, SpawnerError> {
    let sender = SPAWNER
        .get_or_init(start)
        .as_ref()
        .map_err(|e| SpawnerError::Unavailable(e.clone()))?
        .clone();
    let (reply, answer) = oneshot::channel();
    let mut command = command;
    let job: Job = Box::new(move || {
        let _ = reply.send(command.spawn());
        drop(command);
    });
    sender
        .send(job)
        .map_err(|_| SpawnerError::Unavailable("the spawner thread has stopped".into()))?;
    answer
        .await
        .map_err(|_| SpawnerError::Unavailable("the spawner thread dropped the request".into()))?
        .map_err(SpawnerError::Spawn)
}

/// Why the spawner could not start a child.
#[derive(Debug)]
pub(crate) enum SpawnerError {
    /// The spawner thread could not be started or is gone.
    Unavailable(String),
    /// The spawn itself failed (exec, chdir, the pre-exec hook).
    Spawn(io::Error),
}

fn start() -> Result<mpsc::Sender<Job>, String> {
    let (sender, jobs) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("subagent-spawner".into())
        .spawn(move || {
            unix::reserve_low_fds();
            while let Ok(job) = jobs.recv() {
                // A panicking job must not end this thread: that would fire
                // every child's parent-death signal.
                let _ = catch_unwind(AssertUnwindSafe(job));
            }
        })
        .map(|_| sender)
        .map_err(|e| format!("cannot start the spawner thread: {e}"))
}
