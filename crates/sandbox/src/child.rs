//! Starting a child under its spec ([`spawn`]): plan the protections on the
//! chores thread, fork on the spawner thread, hand the leader to its reaper
//! thread, start the capture tasks, and return the [`SandboxedChild`] that
//! owns it all.
//!
//! Nothing here blocks the caller's runtime: file-system and cgroupfs work
//! runs on those threads, a cgroup dropped on an error path is removed on
//! the chores thread. Every error path after the fork leaves the tree to
//! the drop guard ([`Running`]), so nothing started here can outlive a
//! failed spawn.

use std::ffi::{CString, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use subagent_protocol::session::{SandboxStatus, Stream};
use tokio::net::unix::pipe;
use tokio::runtime::Handle;
use tokio::sync::watch;

use crate::capture::StreamCapture;
use crate::cgroup::ChildCgroup;
use crate::chores;
use crate::error::SpawnError;
use crate::exit::ChildExit;
use crate::kill::KillHandle;
use crate::leaks::{self, TreeScope};
use crate::plan::{self, Planned};
use crate::pre_exec::ChildSetup;
use crate::procfs;
use crate::reaper;
use crate::running::{CaptureTask, Running};
use crate::spawner::{self, SpawnerError};
use crate::spec::{SandboxPolicy, SandboxSpec};
use crate::vfork::VforkSpawn;

/// Starts `spec.program` under the spec's limits.
///
/// Needs a tokio runtime with IO and time enabled. With
/// [`SandboxPolicy::RequireAll`], starts nothing when a requested cap cannot
/// be enforced; otherwise the missing protections are listed in
/// [`SandboxedChild::status`].
pub async fn spawn(mut spec: SandboxSpec) -> Result<SandboxedChild, SpawnError> {
    let runtime = Handle::try_current().map_err(|_| SpawnError::NoRuntime)?;
    let (cwd, limits, wanted) = (spec.cwd.clone(), spec.limits, spec.isolation.clone());
    let Planned {
        status,
        rlimits,
        cgroup,
        isolation,
    } = chores::call(move || plan::plan(&cwd, &limits, wanted.as_ref()))
        .await
        .ok_or_else(|| {
            setup_error(
                "the sandbox's chores thread",
                std::io::Error::other("planning the protections failed"),
            )
        })??;
    if spec.policy == SandboxPolicy::RequireAll && !status.not_applied.is_empty() {
        return Err(SpawnError::Unsandboxed {
            missing: status.not_applied,
        });
    }
    let procs = cgroup
        .as_ref()
        .map(ChildCgroup::procs_files)
        .unwrap_or_default()
        .into_iter()
        .map(|p| CString::new(p.as_os_str().as_bytes()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| setup_error("the cgroup paths", std::io::Error::other(e)))?;
    let setup = ChildSetup::new(procs, rlimits, spec.protocol_fd.take(), isolation)
        .map_err(|e| setup_error("the protocol fd", e))?;

    let started = Instant::now();
    let (pid, stdout, stderr) = start_leader(&spec, setup).await?;
    let stdout_inode = stdout.as_ref().and_then(inode).unwrap_or(0);
    let stderr_inode = stderr.as_ref().and_then(inode).unwrap_or(0);
    // process_group(0) made the leader's pid its group id.
    let pgid = i32::try_from(pid).unwrap_or(0);
    let scope = TreeScope {
        leader: pid,
        pgid,
        leader_start: procfs::stat(pid).map_or(0, |s| s.start_ticks),
        pipe_inodes: vec![stdout_inode, stderr_inode],
    };
    leaks::register(&scope);
    let killer = KillHandle::new(
        pgid,
        cgroup.as_ref().map(ChildCgroup::members),
        spec.grace,
        runtime.clone(),
    );
    // Without a reaper thread, the tree is killed and cleaned up elsewhere.
    let link = reaper::start(scope, cgroup, killer.clone())
        .map_err(|e| setup_error("the reaper thread", e))?;
    let (stop, stop_rx) = watch::channel(false);
    let mut guard = Running {
        started,
        exited: Some(link.exited),
        cleanup: Some(link.cleanup),
        stdout: None,
        stderr: None,
        stop,
        killer: killer.clone(),
        finished: false,
    };
    // On error the guard's Drop kills the tree and the reaper cleans up.
    let capture = |fd: Option<OwnedFd>, stream, hard_bytes, inode| {
        let fd = fd.ok_or_else(|| std::io::Error::other("the pipe was not created"))?;
        let receiver = pipe::Receiver::from_owned_fd(fd)?;
        let eof = Arc::new(AtomicBool::new(false));
        let task = StreamCapture {
            stream,
            hard_bytes,
            keep_head: spec.capture.keep_head_bytes,
            keep_tail: spec.capture.keep_tail_bytes,
            killer: killer.clone(),
            eof: Arc::clone(&eof),
        };
        Ok::<_, std::io::Error>(CaptureTask {
            handle: runtime.spawn(task.run(receiver, stop_rx.clone())),
            result: None,
            eof,
            inode,
        })
    };
    guard.stdout = Some(
        capture(
            stdout,
            Stream::Stdout,
            spec.capture.stdout_hard_bytes,
            stdout_inode,
        )
        .map_err(|e| setup_error("the stdout pipe", e))?,
    );
    guard.stderr = Some(
        capture(
            stderr,
            Stream::Stderr,
            spec.capture.stderr_hard_bytes,
            stderr_inode,
        )
        .map_err(|e| setup_error("the stderr pipe", e))?,
    );
    Ok(SandboxedChild {
        pid,
        status,
        killer,
        run: guard,
    })
}

/// A running sandboxed child. Dropping it kills and reaps the whole tree.
#[derive(Debug)]
pub struct SandboxedChild {
    pid: u32,
    status: SandboxStatus,
    killer: KillHandle,
    run: Running,
}

impl SandboxedChild {
    /// The leader's pid (also its process-group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Which protections are in force and which are not (with why).
    pub fn status(&self) -> &SandboxStatus {
        &self.status
    }

    /// A handle to terminate or kill the tree from anywhere.
    pub fn killer(&self) -> KillHandle {
        self.killer.clone()
    }

    /// Resolves once the leader has exited, the tree is dead and reaped, and
    /// the pipes are drained or closed. Descendants still alive (or holding
    /// the pipes) [`crate::PIPE_DRAIN_WINDOW`] after the leader exited are killed and
    /// reported. Never times out by itself: deadlines are the caller's, via
    /// [`Self::killer`].
    pub async fn wait(self) -> ChildExit {
        let SandboxedChild { mut run, .. } = self;
        run.wait().await
    }
}

/// Starts the leader: through a borrowed-memory spawn ([`crate::vfork`])
/// where it can, else through `Command` (a `fork`): the tool sandbox's
/// namespaces fork again inside the hook, and a program named without a
/// path needs `Command`'s search. Returns its pid and our pipe ends.
async fn start_leader(
    spec: &SandboxSpec,
    setup: ChildSetup,
) -> Result<(u32, Option<OwnedFd>, Option<OwnedFd>), SpawnError> {
    let spawner_error = |e: SpawnerError| match e {
        SpawnerError::Spawn(source) => SpawnError::Spawn {
            program: spec.program.clone(),
            source,
        },
        SpawnerError::NoThread(source) => setup_error("the spawner thread", source),
        SpawnerError::Gone => setup_error(
            "the spawner thread",
            std::io::Error::other(SpawnerError::Gone.to_string()),
        ),
    };
    if spec.isolation.is_none() && spec.program.is_absolute() {
        let (child, stdout, stderr) = VforkSpawn::new(
            &spec.program,
            spec.args.iter().map(OsString::as_os_str),
            spec.env.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str())),
            &spec.cwd,
            setup,
        )
        .map_err(|source| SpawnError::Spawn {
            program: spec.program.clone(),
            source,
        })?;
        let pid = spawner::spawn_vfork(child).await.map_err(spawner_error)?;
        return Ok((pid, Some(stdout), Some(stderr)));
    }
    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: the hook runs in the forked child only and makes only
    // async-signal-safe calls on data prepared before the fork (see
    // `ChildSetup::apply_in_child`).
    unsafe {
        command.pre_exec(move || setup.apply_in_child());
    }
    let mut child = spawner::spawn(command).await.map_err(spawner_error)?;
    let pid = child.id();
    let stdout = child.stdout.take().map(OwnedFd::from);
    let stderr = child.stderr.take().map(OwnedFd::from);
    // The std handle is not needed: the reaper thread waits by pid.
    drop(child);
    Ok((pid, stdout, stderr))
}

fn inode(fd: &OwnedFd) -> Option<u64> {
    let file = std::fs::File::from(fd.try_clone().ok()?);
    file.metadata().ok().map(|m| m.ino())
}

fn setup_error(what: &'static str, source: std::io::Error) -> SpawnError {
    SpawnError::Setup { what, source }
}
