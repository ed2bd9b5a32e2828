//! Planning a child's protections and starting its leader, as one job on
//! the spawner thread ([`crate::spawner`]).
//!
//! One job rather than a plan on the chores thread and then a fork on the
//! spawner thread: every hand-over between threads costs a wake-up (tens
//! to hundreds of microseconds on a loaded 2-core machine), and a spawn
//! made three of them. The plan's cgroupfs work may block; the spawner
//! thread is off every async runtime and does nothing but starts, so that
//! blocks nobody but the next start.
//!
//! Nothing here waits on the child beyond its exec. A job whose caller is
//! gone by the time the leader started kills and reaps it at once.

use std::ffi::{CString, OsString};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Instant;

use subagent_protocol::session::SandboxStatus;

use crate::cgroup::ChildCgroup;
use crate::error::SpawnError;
use crate::layer::child::LayerSetup;
use crate::layer::handoff::{self, Received};
use crate::layer::{LayerStep, RunLayer};
use crate::placeholders::Placeholders;
use crate::plan::{self, Planned};
use crate::pre_exec::ChildSetup;
use crate::spawner::{self, SpawnerError};
use crate::spec::{AfterExit, SandboxPolicy, SandboxSpec};
use crate::unix;
use crate::vfork::VforkSpawn;

/// A started leader and what the async side needs to own it.
#[derive(Debug)]
pub(crate) struct Launched {
    pub(crate) status: SandboxStatus,
    pub(crate) cgroup: Option<ChildCgroup>,
    pub(crate) pid: u32,
    /// The write end of the child's stdin, for a conversation.
    pub(crate) stdin: Option<OwnedFd>,
    pub(crate) stdout: Option<OwnedFd>,
    pub(crate) stderr: Option<OwnedFd>,
    /// Just before the leader was started.
    pub(crate) started: Instant,
    /// What the view made on the host, removed once the tree is gone.
    pub(crate) placeholders: Placeholders,
    /// The caller's work for when the tree is gone.
    pub(crate) after_exit: Option<AfterExit>,
    /// The workspace layer the child entered, when it was asked for one.
    pub(crate) layer: Option<RunLayer>,
}

/// Plans and starts `spec`'s leader on the spawner thread.
pub(crate) async fn launch(spec: SandboxSpec) -> Result<Launched, SpawnError> {
    let program = spec.program.clone();
    let answer = spawner::call(
        move || Ok(launch_here(spec)),
        |launched| {
            if let Ok(launched) = launched {
                abandon(launched);
            }
        },
    )
    .await;
    match answer {
        Ok(launched) => launched,
        Err(SpawnerError::Spawn(source)) => Err(SpawnError::Spawn { program, source }),
        Err(SpawnerError::NoThread(source)) => Err(setup_error("the spawner thread", source)),
        Err(SpawnerError::Gone) => Err(setup_error(
            "the spawner thread",
            std::io::Error::other(SpawnerError::Gone.to_string()),
        )),
    }
}

/// What a launch left behind when nobody took it: the leader is killed and
/// reaped here; its cgroup goes with the drop.
fn abandon(launched: Launched) {
    if let Ok(pgid) = i32::try_from(launched.pid) {
        unix::signal_group(pgid, libc::SIGKILL);
    }
    let _ = unix::reap_with_rusage(launched.pid);
    launched.placeholders.remove();
    if let Some(work) = launched.after_exit {
        work.run();
    }
}

/// The job: plan, check the policy, start the leader. Runs on the spawner
/// thread.
fn launch_here(mut spec: SandboxSpec) -> Result<Launched, SpawnError> {
    let Planned {
        status,
        rlimits,
        cgroup,
        isolation,
    } = plan::plan(
        &spec.cwd,
        spec.cwd_fd.as_ref().map(AsFd::as_fd),
        &spec.limits,
        spec.isolation.as_ref(),
    )?;
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
    let placeholders = isolation
        .as_ref()
        .and_then(|i| i.view.as_ref())
        .map(|view| Placeholders::new(view.placeholders.clone(), &spec.cwd, spec.cwd_fd.as_ref()))
        .unwrap_or_default();
    let (layer, report) = match spec.layer.take() {
        Some(layer) => {
            let (ours, theirs) = handoff::pair().map_err(|e| setup_error("the layer socket", e))?;
            let setup = LayerSetup::new(layer, &spec.cwd, theirs)
                .map_err(|e| setup_error("the layer", e))?;
            (Some(setup), Some(ours))
        }
        None => (None, None),
    };
    let hands_back = layer.as_ref().is_some_and(LayerSetup::hands_back);
    let setup = ChildSetup::new(
        procs,
        rlimits,
        spec.protocol_fd.take(),
        spec.cwd_fd.take(),
        isolation,
        layer,
    )
    .map_err(|e| setup_error("the protocol fd", e))?;
    if cgroup.is_some() {
        crate::cgroup::keep_warm();
    }
    let started = Instant::now();
    let started_leader = start_leader(&spec, setup);
    let received = report.as_ref().map(handoff::receive);
    let Leader {
        pid,
        stdin,
        stdout,
        stderr,
    } = match started_leader {
        Ok(started) => started,
        Err(_) if let Some(Received::Failed { step, errno }) = received => {
            return Err(SpawnError::Layer {
                step,
                source: std::io::Error::from_raw_os_error(errno),
            });
        }
        Err(source) => {
            return Err(SpawnError::Spawn {
                program: spec.program.clone(),
                source,
            });
        }
    };
    let layer = match received {
        None => None,
        Some(Received::Entered(fds)) if !hands_back => {
            drop(fds);
            None
        }
        Some(Received::Entered(fds)) => match <[std::os::fd::OwnedFd; 4]>::try_from(fds) {
            Ok([layer_root, merged, user_ns, mount_ns]) => Some(RunLayer {
                layer_root,
                merged,
                user_ns,
                mount_ns,
            }),
            Err(_) => None,
        },
        Some(_) => None,
    };
    if hands_back && layer.is_none() {
        // Started, yet its layer never came back: it must not run.
        if let Ok(pgid) = i32::try_from(pid) {
            unix::signal_group(pgid, libc::SIGKILL);
        }
        let _ = unix::reap_with_rusage(pid);
        return Err(SpawnError::Layer {
            step: LayerStep::Handoff,
            source: std::io::Error::from(std::io::ErrorKind::UnexpectedEof),
        });
    }
    Ok(Launched {
        status,
        cgroup,
        pid,
        stdin,
        stdout,
        stderr,
        started,
        placeholders,
        after_exit: spec.after_exit.take(),
        layer,
    })
}

/// A started leader's pid and our ends of its pipes.
struct Leader {
    pid: u32,
    stdin: Option<OwnedFd>,
    stdout: Option<OwnedFd>,
    stderr: Option<OwnedFd>,
}

/// Starts the leader: through a borrowed-memory spawn ([`crate::vfork`])
/// where it can, else through `Command` (a `fork`): the tool sandbox's
/// namespaces fork again inside the hook, a program named without a path
/// needs `Command`'s search, and a conversation needs a stdin pipe.
fn start_leader(spec: &SandboxSpec, setup: ChildSetup) -> std::io::Result<Leader> {
    // A pinned working directory is entered by the setup, by descriptor.
    let cwd = (!setup.enters_cwd()).then_some(spec.cwd.as_path());
    if spec.isolation.is_none()
        && !setup.enters_layer()
        && !spec.conversation
        && spec.program.is_absolute()
    {
        let (child, stdout, stderr) = VforkSpawn::new(
            &spec.program,
            spec.args.iter().map(OsString::as_os_str),
            spec.env.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str())),
            cwd,
            setup,
        )?;
        let pid = child.spawn()?;
        return Ok(Leader {
            pid,
            stdin: None,
            stdout: Some(stdout),
            stderr: Some(stderr),
        });
    }
    let mut command = Command::new(&spec.program);
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    command
        .args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(if spec.conversation {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: the hook runs in the forked child only and makes only
    // async-signal-safe calls on data prepared before the fork (see
    // `ChildSetup::apply_in_child`).
    unsafe {
        command.pre_exec(move || setup.apply_in_child());
    }
    let mut child = command.spawn()?;
    let leader = Leader {
        pid: child.id(),
        stdin: child.stdin.take().map(OwnedFd::from),
        stdout: child.stdout.take().map(OwnedFd::from),
        stderr: child.stderr.take().map(OwnedFd::from),
    };
    // The std handle is not needed: the exit watch waits by pid.
    drop(child);
    Ok(leader)
}

fn setup_error(what: &'static str, source: std::io::Error) -> SpawnError {
    SpawnError::Setup { what, source }
}
