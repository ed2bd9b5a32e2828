//! A tool process: one program run under the tool sandbox (crates/sandbox)
//! for one call, shared by the process tools (`python_execute`, `bash`).
//!
//! The sandbox: its own user, pid, mount and (network off) network
//! namespaces, or with the network on the run's private network
//! ([`crate::network`]), Landlock limiting it to the system paths, the
//! paths the tool names (an interpreter's prefixes), the workspace and a
//! private tmp dir, a seccomp filter, no capabilities, an allowlisted
//! environment, memory and pids caps, a per-call timeout and capped output.
//!
//! The result says how the process ended (exit code, signal, timeout,
//! memory or pids limit, output limit) and shows stdout and stderr. Any end
//! but exit code 0 is a tool error, so it stands out in the session file;
//! either way the model reads the whole report and the loop goes on.
//!
//! The process's life is tied to the call: dropping the future (the worker's
//! cancel or outer deadline) kills the whole tree.
//!
//! The run may grow the workspace by `--tool-disk` at most ([`crate::disk`]):
//! each call measures the workspace first, caps every file it writes
//! (RLIMIT_FSIZE) at what is left, and is stopped by [`disk::watch`] when
//! the growth passes the cap all the same (many files, or many calls).
//!
//! The process works in the run's workspace directory as it was admitted
//! (entered and bound by its descriptor, [`crate::pin`]), and after its
//! tree is gone every `.git` it made or changed is set aside
//! ([`crate::git_call`]), whichever way the call ended.
//!
//! This module knows no tool's arguments: each tool checks its own and
//! says here what to run.

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use subagent_sandbox::net::{NetworkOptions, PrivateNetwork};
use subagent_sandbox::{
    AfterExit, CaptureLimits, ChildExit, Isolation, KillReason, NotApplied, ResourceLimits,
    SandboxPolicy, SandboxSpec, Stream, Termination, protection,
};

use crate::disk::{self, Breach, CallStart};
use crate::git_call::{self, GitReport};
use crate::tool::{ToolContext, ToolError, ToolOutput};

/// Output of one stream after which the tool process is stopped, bytes:
/// twenty times what the model is shown, enough for a head and a tail.
const STREAM_HARD_BYTES: u64 = 1024 * 1024;

/// Head and tail of each stream kept in memory, bytes each.
const STREAM_KEEP_BYTES: usize = 32 * 1024;

/// Time between SIGTERM and SIGKILL: the tool's tree gets no say in its
/// shutdown beyond this.
pub(crate) const KILL_GRACE: Duration = Duration::from_secs(1);

/// Largest file a tool process may write, bytes (less when less of the
/// run's `--tool-disk` is left).
pub(crate) const FILE_SIZE_BYTES: u64 = 256 * 1024 * 1024;

const MIB: u64 = 1024 * 1024;

/// Open files of a tool process.
const OPEN_FILES: u64 = 1024;

/// `PATH` of a tool process when the worker has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// What one call runs.
#[derive(Debug)]
pub(crate) struct ProcessCall {
    /// The program, by absolute path.
    pub(crate) program: PathBuf,
    /// Its arguments (after its name).
    pub(crate) args: Vec<OsString>,
    /// Paths besides the system ones it may read and execute from.
    pub(crate) read_only: Vec<PathBuf>,
    /// Its wall-clock limit.
    pub(crate) timeout: Duration,
    /// How the model asks for more time, in its tool's words, for the
    /// timeout report: "pass a larger timeout_seconds (at most 600 s)".
    pub(crate) more_time: String,
}

/// The call's wall-clock limit: `asked` (already known to be positive),
/// within `..= max`; the default when nothing was asked.
pub(crate) fn clamp_timeout(asked: Option<Duration>, ctx: &ToolContext) -> Duration {
    let max = ctx.max_timeout.max(ctx.timeout);
    asked.map_or(ctx.timeout, |asked| asked.min(max))
}

/// How long [`crate::run_tool`] lets a process call run: its own timeout,
/// then the kill grace, then the reaping; past that, something is wrong
/// and the outer race ends the call.
pub(crate) fn outer_deadline(ctx: &ToolContext) -> Duration {
    ctx.max_timeout.max(ctx.timeout) + KILL_GRACE * 2 + Duration::from_secs(5)
}

pub(crate) async fn run(call: ProcessCall, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let timeout = call.timeout;
    let workspace = ctx.workspace_dir.canonicalize().map_err(|e| {
        ToolError::Failed(format!(
            "the workspace {} is not usable ({e}); the operator must fix --workspace",
            ctx.workspace_dir.display()
        ))
    })?;
    let root = workspace_root(&workspace, ctx)?;
    let git = git_call::before_call(Arc::clone(&root)).await?;
    let disk = ctx.disk.start_call(&workspace).await.map_err(|e| {
        ToolError::Failed(format!(
            "the workspace {} could not be measured for --tool-disk ({e}); the operator must fix \
             --workspace",
            workspace.display()
        ))
    })?;
    let private_tmp = tempfile::Builder::new()
        .prefix("subagent-tool-")
        .tempdir()
        .map_err(|e| ToolError::Failed(format!("cannot create a private tmp dir: {e}")))?;
    let network = network_for(ctx).await?;
    let mut spec = tool_spec(&call, &workspace, private_tmp.path(), ctx);
    if let Some(isolation) = spec.isolation.as_mut() {
        isolation.private_network = network;
    }
    spec.limits.file_size_bytes = Some(FILE_SIZE_BYTES.min(disk.remaining()));
    spec.cwd_fd = Some(
        root.try_clone()
            .map_err(|e| ToolError::Failed(format!("cannot hold the workspace open: {e}")))?,
    );
    // Set once the spawn says so; until then the root's .git is checked
    // too (a spawn that failed half-way bound nothing read-only).
    let top_protected = Arc::new(AtomicBool::new(false));
    let (checked, git_report) = tokio::sync::oneshot::channel::<GitReport>();
    let tag = if ctx.run_id.is_empty() {
        "tool".to_owned()
    } else {
        ctx.run_id.clone()
    };
    let (notices, protected) = (ctx.notices.clone(), Arc::clone(&top_protected));
    spec.after_exit = Some(AfterExit::new(move || {
        let report = git.after_call(&tag, protected.load(Ordering::SeqCst));
        // Said in the record even when nobody waits for the call any more.
        if checked.send(report.clone()).is_err() {
            notices.extend(report.notices);
        }
    }));
    let child = subagent_sandbox::spawn(spec)
        .await
        .map_err(|e| ToolError::Failed(format!("the tool process could not be started: {e}")))?;
    top_protected.store(
        child
            .status()
            .applied
            .iter()
            .any(|p| p == protection::WORKSPACE_CONFIG_READ_ONLY),
        Ordering::SeqCst,
    );
    let not_applied = child.status().not_applied.clone();
    let killer = child.killer();
    let wait = child.wait();
    tokio::pin!(wait);
    let mut breach = None;
    let exit = tokio::select! {
        exit = &mut wait => exit,
        () = tokio::time::sleep(timeout) => {
            killer.terminate(KillReason::Timeout);
            wait.await
        }
        found = disk::watch(workspace.clone(), disk) => {
            breach = Some(found);
            killer.terminate(KillReason::DiskLimit);
            wait.await
        }
    };
    drop(private_tmp);
    let mut report = report(&exit, &call, ctx, &not_applied);
    report.push_str(&disk_note(breach, &disk));
    // The check ran before the wait returned; it is sent by then.
    if let Ok(git) = git_report.await {
        report.push_str(&git.text);
        ctx.notices.extend(git.notices);
    }
    if exit.termination == (Termination::Exited { code: 0 }) {
        Ok(ToolOutput::text(report))
    } else {
        Err(ToolError::Failed(report))
    }
}

/// The run's private network when process tools have the network on
/// (started by the first caller), else `None`.
pub(crate) async fn network_for(
    ctx: &ToolContext,
) -> Result<Option<Arc<PrivateNetwork>>, ToolError> {
    if !ctx.process.allow_network {
        return Ok(None);
    }
    let openers = ctx.web.addresses.openers();
    let options = NetworkOptions {
        allow_private_networks: openers.private_networks,
        allow_link_local_networks: openers.link_local_networks,
    };
    ctx.network
        .get(options)
        .await
        .map(Some)
        .map_err(|e| ToolError::Failed(e.to_string()))
}

/// The workspace's directory to run in: the run's pinned one, once its
/// path is checked to still lead there; else (a context without a run)
/// the directory `workspace` names now.
pub(crate) fn workspace_root(
    workspace: &Path,
    ctx: &ToolContext,
) -> Result<Arc<OwnedFd>, ToolError> {
    match &ctx.workspace_pin {
        Some(pin) => {
            pin.check(workspace).map_err(ToolError::Failed)?;
            Ok(Arc::clone(pin.fd()))
        }
        None => crate::beneath::open_root(workspace)
            .map(Arc::new)
            .map_err(|e| {
                ToolError::Failed(format!(
                    "the workspace {} is not usable ({e}); the operator must fix --workspace",
                    workspace.display()
                ))
            }),
    }
}

pub(crate) fn tool_spec(
    call: &ProcessCall,
    workspace: &Path,
    private_tmp: &Path,
    ctx: &ToolContext,
) -> SandboxSpec {
    let policy = &ctx.process;
    let mut spec = SandboxSpec::new(&call.program, workspace);
    spec.args.clone_from(&call.args);
    let var = |name: &str, default: &str| {
        std::env::var_os(name).unwrap_or_else(|| OsString::from(default))
    };
    spec.env = vec![
        ("PATH".into(), var("PATH", DEFAULT_PATH)),
        ("LANG".into(), var("LANG", "C.UTF-8")),
        ("HOME".into(), private_tmp.into()),
        ("TMPDIR".into(), private_tmp.into()),
    ];
    spec.limits = ResourceLimits {
        memory_bytes: Some(policy.memory_bytes),
        pids: Some(policy.pids),
        file_size_bytes: Some(FILE_SIZE_BYTES),
        open_files: Some(OPEN_FILES),
        cpu_seconds: None,
    };
    spec.capture = CaptureLimits {
        stdout_hard_bytes: STREAM_HARD_BYTES,
        stderr_hard_bytes: STREAM_HARD_BYTES,
        keep_head_bytes: STREAM_KEEP_BYTES,
        keep_tail_bytes: STREAM_KEEP_BYTES,
    };
    spec.grace = KILL_GRACE;
    spec.policy = if policy.require_sandbox {
        SandboxPolicy::RequireAll
    } else {
        SandboxPolicy::BestEffort
    };
    let mut isolation = Isolation::strict(vec![workspace.to_owned(), private_tmp.to_owned()]);
    isolation.read_only.extend(call.read_only.iter().cloned());
    // With the filesystem view, this path is a directory of the view's
    // size-capped tmpfs /tmp rather than the host directory.
    isolation.private_tmp = Some(private_tmp.to_owned());
    isolation.network = policy.allow_network;
    isolation.protected.clone_from(&ctx.protected);
    spec.isolation = Some(isolation);
    spec
}

/// The text the model reads: how it ended, then stdout and stderr.
fn report(
    exit: &ChildExit,
    call: &ProcessCall,
    ctx: &ToolContext,
    not_applied: &[NotApplied],
) -> String {
    let mut text = ending(exit, call, ctx);
    text.push('\n');
    for (name, captured) in [("stdout", &exit.stdout), ("stderr", &exit.stderr)] {
        if captured.bytes_seen == 0 {
            text.push_str(&format!("--- {name}: (empty) ---\n"));
            continue;
        }
        text.push_str(&format!("--- {name} ---\n"));
        text.push_str(&captured.lossy_text());
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    if !not_applied.is_empty() {
        let missing: Vec<String> = not_applied
            .iter()
            .map(|n| format!("{} ({})", n.protection, n.reason))
            .collect();
        text.push_str(&format!(
            "--- sandbox: not applied: {} ---\n",
            missing.join("; ")
        ));
    }
    text
}

fn ending(exit: &ChildExit, call: &ProcessCall, ctx: &ToolContext) -> String {
    match &exit.termination {
        Termination::Exited { code } => format!("exit code {code}"),
        Termination::Signaled { signal } => {
            format!("killed by signal {signal} ({})", signal_name(*signal))
        }
        Termination::Timeout => format!(
            "timed out after {} s: the whole process tree was stopped; make it faster, or {}",
            call.timeout.as_secs_f64(),
            call.more_time
        ),
        Termination::DiskLimit => format!(
            "stopped: the tool grew the workspace by more than {} (--tool-disk) and was stopped",
            size(ctx.disk.cap())
        ),
        Termination::MemoryLimit if exit.own_memory_cap_hit => format!(
            "stopped: the memory limit of {} MiB was reached; process the data in smaller pieces",
            ctx.process.memory_bytes / (1024 * 1024)
        ),
        // Killed by an enclosing cap (the worker's `--memory`), which is
        // smaller than the tool's own: naming the tool's would mislead.
        Termination::MemoryLimit => "stopped: out of memory: the memory limit of the worker that \
             runs this tool was reached (its own limit is lower than the tool's); process the \
             data in smaller pieces"
            .to_owned(),
        Termination::PidsLimit => format!(
            "stopped: the limit of {} processes and threads was reached",
            ctx.process.pids
        ),
        Termination::OutputLimit { stream } => format!(
            "stopped: {} passed {} MiB; print less, or write large output to a file in the workspace",
            match stream {
                Stream::Stdout => "stdout",
                Stream::Stderr => "stderr",
            },
            STREAM_HARD_BYTES / (1024 * 1024)
        ),
        Termination::Leaked { pids } => format!(
            "exit code 0, but {} background process(es) outlived the call and were stopped",
            pids.len()
        ),
        Termination::Cancelled => "cancelled".into(),
        Termination::IdleTimeout => "stopped: no progress".into(),
        Termination::Killed { reason } => format!("stopped: {reason}"),
    }
}

/// What the model is told of the workspace cap: what a breach was, or,
/// when less than a full file is left, how much may still be written.
fn disk_note(breach: Option<Breach>, start: &CallStart) -> String {
    match breach {
        Some(Breach::Grew(grown)) => format!(
            "--- workspace: grown by {} this run, past the {} allowed; delete what is not \
             needed, write smaller outputs, or ask the operator for a larger --tool-disk ---\n",
            size(grown),
            size(start.cap)
        ),
        Some(Breach::Hidden(dirs)) => format!(
            "--- workspace: {dirs} director(ies) made unreadable (chmod), so the --tool-disk \
             watch could not measure them; keep workspace directories readable ---\n"
        ),
        None if start.remaining() < FILE_SIZE_BYTES => format!(
            "--- workspace: {} more may be written this run (--tool-disk {}); a file is \
             capped at that ---\n",
            size(start.remaining()),
            size(start.cap)
        ),
        None => String::new(),
    }
}

/// Bytes for the model: `512 MiB`, `1 GiB`, `1.5 GiB`, `300 KiB`.
fn size(bytes: u64) -> String {
    if bytes >= 1024 * MIB {
        let gib = bytes as f64 / (1024 * MIB) as f64;
        if bytes.is_multiple_of(1024 * MIB) {
            format!("{gib:.0} GiB")
        } else {
            format!("{gib:.1} GiB")
        }
    } else if bytes >= MIB {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXFSZ => "SIGXFSZ: a file grew past the size limit",
        libc::SIGXCPU => "SIGXCPU",
        _ => "signal",
    }
}
