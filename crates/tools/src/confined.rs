//! The file tools' second wall: each call runs on a thread of its own that
//! Landlocks itself to reading the workspace before it opens anything.
//!
//! The first wall is [`crate::beneath`]: every open is beneath the
//! workspace root's fd. This one holds if that check were ever wrong: the
//! thread that does a call's reading may read files and list directories
//! under the workspace root and nothing else (no other read, no write,
//! no execute, anywhere), enforced by the kernel.
//!
//! Why a thread and not the whole worker process, as one would expect: a
//! task with a filesystem Landlock domain can no longer mount or
//! `pivot_root`, even in a user and mount namespace of its own, and the
//! worker starts tool processes whose sandbox mounts a fresh `/proc` (and a
//! filesystem view). Landlock up to ABI 7 confines the calling thread only,
//! and what the thread starts, so a thread started for the call, confined
//! before its first open and ended with the call, leaves the rest of the
//! worker (the spawner thread, DNS lookups, the reaper) as it was.
//!
//! The rule is made on the run's pinned workspace directory ([`crate::pin`])
//! when there is one, not on its path: a path swapped for a symlink after
//! the call's check leads the thread nowhere it may read.
//!
//! Without Landlock in the kernel the call runs without this wall, as the
//! session header's `file_tools_landlock` entry says; under
//! `--require-sandbox` it is refused instead. This module must not run a
//! tool's work on a thread that was not confined, unless the policy allows
//! it.

use std::os::fd::OwnedFd;
use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, PathBeneath, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
};
use tokio::sync::oneshot;

use crate::blocking::{CancelFlag, RaiseOnDrop};
use crate::tool::{ToolContext, ToolError};

/// The newest filesystem rights this code knows: ABI 6 and 7 added none.
/// An older kernel handles fewer (the crate's best-effort mode), never
/// none while it has Landlock at all.
const HANDLED_ABI: ABI = ABI::V5;

/// What a confined thread may do under the workspace root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileRights {
    /// Read files and list directories.
    Read,
    /// That, and make, write, truncate, rename over and remove files and
    /// make directories.
    Write,
}

impl FileRights {
    fn access(self) -> landlock::BitFlags<AccessFs> {
        let read = AccessFs::ReadFile | AccessFs::ReadDir;
        match self {
            FileRights::Read => read,
            FileRights::Write => {
                read | AccessFs::WriteFile
                    | AccessFs::Truncate
                    | AccessFs::MakeReg
                    | AccessFs::MakeDir
                    | AccessFs::RemoveFile
            }
        }
    }
}

/// Runs `work` on a new thread confined to reading `ctx`'s workspace, and
/// waits for it. Dropping the future raises the work's cancel flag.
pub(crate) async fn run_confined<T, F>(ctx: &ToolContext, work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(&CancelFlag) -> Result<T, ToolError> + Send + 'static,
{
    run_confined_with(ctx, FileRights::Read, work).await
}

/// Runs `work` on a new thread confined to `rights` under `ctx`'s
/// workspace, and waits for it. Dropping the future raises the work's
/// cancel flag.
pub(crate) async fn run_confined_with<T, F>(
    ctx: &ToolContext,
    rights: FileRights,
    work: F,
) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(&CancelFlag) -> Result<T, ToolError> + Send + 'static,
{
    let flag = CancelFlag::default();
    let _raise = RaiseOnDrop(flag.clone());
    let workspace = ctx.workspace_dir.clone();
    let pinned = match &ctx.workspace_pin {
        Some(pin) => Some(
            pin.duplicate()
                .map_err(|e| ToolError::Failed(format!("cannot hold the workspace open: {e}")))?,
        ),
        None => None,
    };
    let required = ctx.process.require_sandbox;
    let (reply, answer) = oneshot::channel();
    std::thread::Builder::new()
        .name("subagent-file-tool".into())
        .spawn(move || {
            let result = match confine_to(&workspace, pinned, rights) {
                Ok(()) => work(&flag),
                Err(reason) if required => Err(ToolError::Failed(format!(
                    "refusing to use the workspace unconfined (--require-sandbox): {reason}"
                ))),
                // Reported in the session header; the first wall stands.
                Err(_) => work(&flag),
            };
            let _ = reply.send(result);
        })
        .map_err(|e| ToolError::Failed(format!("cannot start the file tool's thread: {e}")))?;
    answer.await.map_err(|_| {
        ToolError::Failed("the file tool's thread ended without an answer".to_owned())
    })?
}

/// Confines the calling thread (and whatever it would start) to reading
/// files and listing directories under `workspace` (under `pinned`, the
/// run's workspace directory, when given); `Err` says why it was not
/// confined.
pub(crate) fn confine_to(
    workspace: &Path,
    pinned: Option<OwnedFd>,
    rights: FileRights,
) -> Result<(), String> {
    let root: OwnedFd = match pinned {
        Some(fd) => fd,
        // As `landlock::PathFd` opens it: `O_PATH`.
        None => rustix::fs::open(
            workspace,
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(|e| format!("cannot open the workspace {}: {e}", workspace.display()))?,
    };
    let status = Ruleset::default()
        .handle_access(AccessFs::from_all(HANDLED_ABI))
        .and_then(Ruleset::create)
        .and_then(|ruleset| ruleset.add_rule(PathBeneath::new(root, rights.access())))
        .and_then(|ruleset| ruleset.restrict_self())
        .map_err(|e| format!("Landlock could not be applied: {e}"))?;
    match status.ruleset {
        RulesetStatus::FullyEnforced | RulesetStatus::PartiallyEnforced => Ok(()),
        RulesetStatus::NotEnforced => Err(
            "this kernel has no Landlock (Linux 5.13+ built with CONFIG_SECURITY_LANDLOCK and \
             landlock in the lsm= boot parameter)"
                .to_owned(),
        ),
    }
}

#[cfg(test)]
#[path = "confined_tests.rs"]
mod tests;
