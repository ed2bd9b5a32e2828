//! What becomes of a run's layer when the run has ended: its changes
//! collected, judged, and applied to the workspace when the run completed
//! and `--apply on-success` holds, kept when some are left (`--apply
//! never`, conflicts), discarded when the run did not complete. The
//! settings that choose ([`WorkspaceIsolation`], [`ApplyMode`]) are
//! configuration's (`subagent-config`).
//!
//! Runs one settlement at a time in this process, so parallel runs apply
//! in the order they completed and never interleave. Blocking: callers on
//! an async runtime use `spawn_blocking`.

use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use rustix::fs::{Mode, OFlags};
use subagent_config::ApplyMode;
use subagent_protocol::changes::{ChangeIssue, Changes};
use subagent_sandbox::{RunLayer, UPPER_DIR};

use super::apply::apply;
use super::change::{Change, Contents};
use super::kept::KeptLayer;
use super::{collect, policy};

/// The clock a filesystem stamps change times from (the kernel's coarse
/// clock, one tick behind the fine one): a run's start read from it is
/// at or before the change time of every write after the start, so no
/// change made meanwhile is missed; a write less than one tick before the
/// start may count as one (a conflict kept, never a file overwritten).
pub fn change_clock_now() -> SystemTime {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse);
    let secs = u64::try_from(now.tv_sec).unwrap_or(0);
    let nanos = u32::try_from(now.tv_nsec).unwrap_or(0);
    std::time::UNIX_EPOCH + Duration::new(secs, nanos.min(999_999_999))
}

/// One settlement at a time in this process.
static SETTLING: Mutex<()> = Mutex::new(());

/// A run's ended layer, and where its changes go.
pub(crate) struct Settlement<'a> {
    pub(crate) layer: &'a RunLayer,
    /// Where changes are applied and compared: the workspace, or the
    /// enclosing run's merged view.
    pub(crate) target: BorrowedFd<'a>,
    /// The workspace's path (for a kept layer's `subagent apply`).
    pub(crate) workspace: &'a Path,
    pub(crate) run_id: &'a str,
    pub(crate) sessions_dir: &'a Path,
    /// The operator's protected paths, relative to the workspace.
    pub(crate) protected: Vec<PathBuf>,
    /// When the layer was made, by [`change_clock_now`].
    pub(crate) started: SystemTime,
    pub(crate) apply: ApplyMode,
    /// The run completed (its changes may be applied).
    pub(crate) completed: bool,
    /// A nested run's changes go to its enclosing run's view, never kept.
    pub(crate) nested: bool,
}

struct Live<'a> {
    upper: BorrowedFd<'a>,
}

impl Contents for Live<'_> {
    fn open(&self, change: &Change) -> std::io::Result<std::fs::File> {
        collect::open_file(self.upper, change.rel())
    }
}

impl Settlement<'_> {
    /// Collects, judges and applies (or keeps, or discards) the changes.
    pub(crate) fn settle(self) -> Changes {
        let _one_at_a_time = SETTLING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let upper = match rustix::fs::openat(
            &self.layer.layer_root,
            UPPER_DIR,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(upper) => upper,
            Err(e) => return unreadable(format!("the run's layer cannot be read: {e}")),
        };
        let mut changes = match collect::collect(upper.as_fd(), self.target) {
            Ok(changes) => changes,
            Err(e) => return unreadable(format!("the run's layer cannot be read: {e}")),
        };
        policy::judge(&mut changes, &self.protected);
        let refused: Vec<ChangeIssue> = changes
            .iter()
            .filter_map(|c| {
                c.refused.as_ref().map(|reason| ChangeIssue {
                    path: c.path.clone(),
                    reason: reason.clone(),
                })
            })
            .collect();
        let files = changes.iter().map(Change::to_file).collect();
        let live = Live {
            upper: upper.as_fd(),
        };
        let since = self.started;
        if !self.completed {
            return Changes {
                files,
                refused,
                not_applied: Some(
                    "the run did not complete, so none of its changes were applied (they are \
                     discarded)"
                        .into(),
                ),
                ..Changes::default()
            };
        }
        if changes.is_empty() {
            return Changes::default();
        }
        if self.apply == ApplyMode::Never && !self.nested {
            return match self.keep(&changes, &[], &live, since) {
                Ok(dir) => Changes {
                    files,
                    refused,
                    not_applied: Some(
                        "--apply never: kept for `subagent diff` and `subagent apply`".into(),
                    ),
                    layer: Some(dir.display().to_string()),
                    ..Changes::default()
                },
                Err(e) => Changes {
                    files,
                    refused,
                    not_applied: Some(format!("--apply never, and keeping them failed: {e}")),
                    ..Changes::default()
                },
            };
        }
        let outcome = apply(&changes, self.target, since, &live, false);
        let layer = if outcome.conflicts.is_empty() || self.nested {
            None
        } else {
            self.keep(&changes, &outcome.applied, &live, since)
                .ok()
                .map(|dir| dir.display().to_string())
        };
        Changes {
            files,
            applied: outcome.applied,
            conflicts: outcome.conflicts,
            refused: outcome.refused,
            not_applied: None,
            layer,
        }
    }

    fn keep(
        &self,
        changes: &[Change],
        applied: &[String],
        live: &Live<'_>,
        since: SystemTime,
    ) -> std::io::Result<PathBuf> {
        KeptLayer::save(
            self.sessions_dir,
            self.run_id,
            self.workspace,
            since,
            &self.protected,
            changes,
            applied,
            live,
        )
    }
}

fn unreadable(reason: String) -> Changes {
    Changes {
        not_applied: Some(reason),
        ..Changes::default()
    }
}

/// Settles `layer`, a completed run's, into `workspace` (open at
/// `workspace_path`) as a run's end does with `--apply on-success` and no
/// protected paths of the operator: for callers that start sandboxes
/// themselves (the benchmarks). `started` is [`change_clock_now`] before
/// the layer's child started; kept changes go under `sessions_dir`.
pub fn settle_completed(
    layer: &RunLayer,
    workspace: BorrowedFd<'_>,
    workspace_path: &Path,
    sessions_dir: &Path,
    run_id: &str,
    started: SystemTime,
) -> Changes {
    Settlement {
        layer,
        target: workspace,
        workspace: workspace_path,
        run_id,
        sessions_dir,
        protected: Vec::new(),
        started,
        apply: ApplyMode::OnSuccess,
        completed: true,
        nested: false,
    }
    .settle()
}
