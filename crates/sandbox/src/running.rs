//! A started child seen through to its end: wait for the leader, give the
//! pipes a bounded drain window, have the reaper kill and reap what is left,
//! collect the captures, decide the verdict.
//!
//! Its `Drop` is the guard: a child dropped before `wait` finished (never
//! awaited, task aborted, panic in the owner) is SIGKILLed here and a
//! thread of its own cleans up the rest ([`reaper::clean_up_abandoned`]).
//! It never blocks in `Drop`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::capture::Captured;
use crate::exit::{ChildExit, ResourceUsage, decide};
use crate::exit_watch::{ExitWatch, LeaderExit};
use crate::kill::KillHandle;
use crate::reaper::{self, CleanupReport, Tree};
use crate::unix::{RawExit, Rusage};

/// How long the pipes may stay open after the leader exited (ms):
/// grandchildren inherit the pipes, and a well-behaved tree flushes and
/// closes them within this window; whoever still holds them afterwards is a
/// leak and gets killed.
pub const PIPE_DRAIN_WINDOW: Duration = Duration::from_millis(500);

/// How long capture may take to hand over its buffers once told to stop
/// (ms); it only drains what is already in the pipe, so this is a safety net.
const CAPTURE_STOP_WINDOW: Duration = Duration::from_millis(1_000);

/// The parts of a child that need tearing down; its `Drop` is the guard.
#[derive(Debug)]
pub(crate) struct Running {
    pub(crate) started: Instant,
    pub(crate) exit: Option<ExitWatch>,
    /// Handed to the cleanup once the leader has exited; still here when
    /// the guard drops, the drop hands it to a thread of its own.
    pub(crate) tree: Option<Tree>,
    pub(crate) stdout: Option<CaptureTask>,
    pub(crate) stderr: Option<CaptureTask>,
    /// Tells the capture tasks to hand over what they have.
    pub(crate) stop: watch::Sender<bool>,
    pub(crate) killer: KillHandle,
    pub(crate) finished: bool,
}

impl Running {
    pub(crate) async fn wait(&mut self) -> ChildExit {
        let exit: Option<LeaderExit> = match self.exit.take() {
            Some(watch) => watch.exited().await,
            None => None,
        };
        let exited_at = exit.map_or_else(Instant::now, |e| e.at);
        let _ = tokio::time::timeout(PIPE_DRAIN_WINDOW, self.finish_captures()).await;
        let open_pipes: Vec<u64> = [&self.stdout, &self.stderr]
            .into_iter()
            .flatten()
            .filter(|c| !c.eof.load(Ordering::SeqCst))
            .map(|c| c.inode)
            .collect();
        let report = self.clean_up(open_pipes).await;
        self.stop.send_replace(true);
        let _ = tokio::time::timeout(CAPTURE_STOP_WINDOW, self.finish_captures()).await;
        let (raw, rusage) = report.reaped.unwrap_or_else(|| {
            let raw = exit.map_or(RawExit::Exited(-1), |e| e.raw);
            (raw, Rusage::default())
        });
        let termination = decide(
            self.killer.reason().as_ref(),
            raw,
            report.verdict,
            &report.leaked,
        );
        self.finished = true;
        ChildExit {
            termination,
            raw,
            stdout: self
                .stdout
                .as_mut()
                .map(CaptureTask::take)
                .unwrap_or_default(),
            stderr: self
                .stderr
                .as_mut()
                .map(CaptureTask::take)
                .unwrap_or_default(),
            usage: ResourceUsage {
                wall: exited_at.saturating_duration_since(self.started),
                cpu: rusage.cpu,
                peak_rss_bytes: rusage.max_rss_bytes,
            },
            leaked_pids: report.leaked,
            own_memory_cap_hit: report.verdict.memory_limit_hit,
        }
    }

    async fn finish_captures(&mut self) {
        let (stdout, stderr) = (&mut self.stdout, &mut self.stderr);
        tokio::join!(CaptureTask::finish(stdout), CaptureTask::finish(stderr));
    }

    async fn clean_up(&mut self, open_pipes: Vec<u64>) -> CleanupReport {
        if self.tree.is_none() {
            return CleanupReport::default();
        }
        let slot = reaper::cleanup_slot().await;
        // Taken only now, and handed to the blocking pool in the same step:
        // whenever this future is dropped, the tree is with the guard or
        // with a cleanup that finishes by itself.
        let Some(tree) = self.tree.take() else {
            return CleanupReport::default();
        };
        reaper::start_cleanup(tree, open_pipes, slot)
            .await
            .unwrap_or_default()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        self.killer.kill_silently();
        for task in [&self.stdout, &self.stderr].into_iter().flatten() {
            task.handle.abort();
        }
        // Gone already when the cleanup had started: it finishes by itself.
        if let Some(tree) = self.tree.take() {
            let _ = reaper::clean_up_abandoned(tree);
        }
    }
}

/// One stream's capture task and, once it finished, its result.
#[derive(Debug)]
pub(crate) struct CaptureTask {
    pub(crate) handle: JoinHandle<Captured>,
    pub(crate) result: Option<Captured>,
    /// Set by the task when every writer closed the pipe.
    pub(crate) eof: Arc<AtomicBool>,
    /// The pipe's inode, to find who still holds it.
    pub(crate) inode: u64,
}

impl CaptureTask {
    async fn finish(task: &mut Option<CaptureTask>) {
        if let Some(task) = task
            && task.result.is_none()
        {
            task.result = Some((&mut task.handle).await.unwrap_or_default());
        }
    }

    fn take(&mut self) -> Captured {
        self.result.take().unwrap_or_default()
    }
}
