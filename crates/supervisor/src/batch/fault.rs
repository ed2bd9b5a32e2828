//! Machine faults in a batch: what is wrong with the machine rather than
//! with a task, so recording it as the task's result would be a lie that a
//! resume believes (it would never run the task again).
//!
//! Two steps: [`preflight`] checks before the first task what can be
//! checked (the sessions dir takes a create, a write, an fsync and a
//! remove; the worker program exists and may be executed), and
//! [`machine_fault`] tells a finished run whose end was the machine's
//! doing (its session file lost, its worker never started), so the batch
//! stops without recording it. Task failures (the model, a tool, a limit)
//! are not machine faults and are recorded as they are.
//!
//! It never starts a process; the probe file is the only thing it writes,
//! and it removes it.

use std::io::Write;
use std::path::{Path, PathBuf};

use nix::sys::signal::Signal;
use nix::unistd::{AccessFlags, access};
use subagent_protocol::ErrorCode;
use subagent_protocol::result::SubagentResult;

/// Why a batch cannot start on this machine.
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    /// The sessions dir cannot take a session file.
    #[error(
        "the sessions dir {dir} cannot be written ({step}: {source}); no task was run or \
         recorded. Make it writable, free space on its disk, or pass another --sessions-dir"
    )]
    SessionsDir {
        /// The sessions dir.
        dir: PathBuf,
        /// What was being done: create the dir, create, write, sync or remove
        /// the probe file.
        step: &'static str,
        /// What the kernel said.
        source: std::io::Error,
    },
    /// The worker program cannot be started.
    #[error(
        "the worker program {program} cannot be started ({reason}); no task was run or \
         recorded. Check --worker (or install subagent-worker beside subagent)"
    )]
    Worker {
        /// The program as configured.
        program: PathBuf,
        /// Why not.
        reason: String,
    },
}

/// Checks, before the first task, that the sessions dir `sessions_dir` can
/// take a session file (create the dir, then create, write, fsync and remove
/// a probe file in it) and that `worker` can be executed.
pub fn preflight(sessions_dir: &Path, worker: &Path) -> Result<(), PreflightError> {
    probe_sessions_dir(sessions_dir)?;
    check_worker(worker)
}

/// The probe file's name: hidden, named for this process, so one left by a
/// probe killed half-way is recognisable (and never read as a session).
fn probe_name() -> String {
    format!(".subagent-probe-{}.tmp", std::process::id())
}

fn probe_sessions_dir(dir: &Path) -> Result<(), PreflightError> {
    let fail = |step, source| PreflightError::SessionsDir {
        dir: dir.to_owned(),
        step,
        source,
    };
    std::fs::create_dir_all(dir).map_err(|e| fail("create the dir", e))?;
    let probe = dir.join(probe_name());
    let written = (|| {
        // Created new, never through a link planted at the name.
        let mut file = crate::untrusted_file::create_temp(&probe)
            .map_err(|e| ("create a file", std::io::Error::from(e)))?;
        // About one session header's worth: a disk with less than this free
        // cannot hold even one task's record.
        file.write_all(&[b'\n'; 4096])
            .map_err(|e| ("write a file", e))?;
        file.sync_all().map_err(|e| ("sync a file", e))
    })();
    let removed = std::fs::remove_file(&probe);
    match (written, removed) {
        (Err((step, e)), _) => Err(fail(step, e)),
        (Ok(()), Err(e)) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(fail("remove a file", e))
        }
        _ => Ok(()),
    }
}

fn check_worker(program: &Path) -> Result<(), PreflightError> {
    let resolved = if program.components().count() > 1 {
        Some(program.to_owned())
    } else {
        // A bare name is looked up in PATH, as the spawn does.
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(program))
                .find(|candidate| candidate.is_file())
        })
    };
    let fail = |reason: String| PreflightError::Worker {
        program: program.to_owned(),
        reason,
    };
    let path = resolved.ok_or_else(|| fail("not found in PATH".to_owned()))?;
    if !path.is_file() {
        return Err(fail("no such file".to_owned()));
    }
    access(&path, AccessFlags::X_OK).map_err(|e| fail(format!("not executable: {e}")))
}

/// Signals that stop a job from outside: a job engine stopping or
/// requeueing the job (Slurm signals every process of the job, workers
/// included, not just the batch), an operator, a hang-up.
const STOP_SIGNALS: [Signal; 3] = [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP];

/// When `result` ended by a fault of the machine, not of the task: what to
/// tell the user. A lost session file (`SUBAGENT_SESSION_LOST`), a
/// worker that never started for want of a program, a working directory,
/// a resource or a thread (`SUBAGENT_FAILED` with stop reason
/// `not_started`), and a worker stopped by a [`STOP_SIGNALS`] signal that
/// the supervisor did not send (termination `signaled`: the batch's own
/// stop signal may arrive a moment after its worker's, too late to mark
/// the task cancelled) are; a refusal to run unsandboxed is the task's (its
/// caps), and anything else after a worker started is the task's.
pub fn machine_fault(result: &SubagentResult) -> Option<String> {
    let error = result.details.error.as_ref()?;
    let single = result.details.results.first();
    let not_started = single.is_some_and(|s| s.stop_reason.as_deref() == Some("not_started"));
    let stopped_by = single
        .and_then(|s| s.termination.as_ref())
        .filter(|t| t.reason == "signaled")
        .and_then(|t| t.signal)
        .and_then(|sig| Signal::try_from(sig).ok())
        .filter(|sig| STOP_SIGNALS.contains(sig));
    match (error.code, stopped_by) {
        (ErrorCode::SubagentSessionLost, _) => Some(error.message.clone()),
        (ErrorCode::SubagentFailed, _) if not_started => Some(format!(
            "the worker could not be started: {}",
            error.message
        )),
        (ErrorCode::SubagentFailed, Some(sig)) => Some(format!(
            "the worker was stopped from outside by {} (the job is being stopped?); \
             the task is not recorded, so a re-run runs it",
            sig.as_str()
        )),
        _ => None,
    }
}

#[cfg(test)]
#[path = "fault_tests.rs"]
mod tests;
