//! `subagent doctor`: what this machine can enforce and reach, one
//! [`Probe`] per question, each either ok with what was found or missing
//! with what is missing and the command or setting that fixes it.
//!
//! The probes that only interpret facts ([`landlock_probe`],
//! [`namespaces_probe`], [`filesystem_view_probe`], [`cgroup_probe`], [`python_probe_from`], [`parse_http_url`],
//! [`model_ids`]) are pure and tested without the machine; the others
//! look once (run `python3`, create and remove a probe file, connect) and
//! never change anything beyond the sessions dir a run would create anyway.
//! Nothing here runs a worker or sends an API key; a model request (1
//! token) is sent only when asked (`--probe-model`).

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;
use subagent_sandbox::{CgroupKind, IsolationSupport};

/// How long `python3` may take to print its version: a cold start on a
/// slow disk takes seconds, a hung interpreter must not hang the doctor.
pub const PYTHON_TIMEOUT: Duration = Duration::from_secs(10);

/// The answer to one question about this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Probe {
    /// Short stable name, e.g. `landlock`, `cgroup`, `python3`.
    pub name: String,
    /// Whether what the probe asks for is there.
    pub ok: bool,
    /// What was found, or what is missing.
    pub detail: String,
    /// The command or setting that fixes a missing probe, or settles a
    /// warning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// Ok, but doubtful: what was found may still fail a run (a model the
    /// server does not list but may serve). Does not fail the doctor.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub warning: bool,
}

impl Probe {
    /// A probe that found what it looked for.
    pub fn ok(name: &str, detail: impl Into<String>) -> Self {
        Self {
            name: name.to_owned(),
            ok: true,
            detail: detail.into(),
            fix: None,
            warning: false,
        }
    }

    /// A probe that found something that may still fail a run: ok (the
    /// doctor does not fail on it), with how to settle the doubt.
    pub fn warning(name: &str, detail: impl Into<String>, settle: impl Into<String>) -> Self {
        Self {
            name: name.to_owned(),
            ok: true,
            detail: detail.into(),
            fix: Some(settle.into()),
            warning: true,
        }
    }

    /// A probe that did not, with how to fix it.
    pub fn missing(name: &str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            name: name.to_owned(),
            ok: false,
            detail: detail.into(),
            fix: Some(fix.into()),
            warning: false,
        }
    }

    /// The probe as one line of text: `ok  <name>: <detail>`,
    /// `warning  <name>: <detail> -- <how to settle it>` or
    /// `MISSING  <name>: <detail> -- <fix>`. Line breaks inside the texts
    /// become spaces so every probe stays one line.
    pub fn line(&self) -> String {
        let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        match (self.ok, &self.fix) {
            (true, Some(settle)) if self.warning => format!(
                "warning  {}: {} -- {}",
                self.name,
                one_line(&self.detail),
                one_line(settle)
            ),
            (true, _) => format!("ok  {}: {}", self.name, one_line(&self.detail)),
            (false, Some(fix)) => format!(
                "MISSING  {}: {} -- {}",
                self.name,
                one_line(&self.detail),
                one_line(fix)
            ),
            (false, None) => format!("MISSING  {}: {}", self.name, one_line(&self.detail)),
        }
    }
}

/// Every probe of one doctor run: the `--json` output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Whether every probe is ok.
    pub ok: bool,
    /// The probes, in the order they ran.
    pub probes: Vec<Probe>,
}

impl Report {
    /// A report over `probes`; ok when every one is.
    pub fn new(probes: Vec<Probe>) -> Self {
        Self {
            ok: probes.iter().all(|p| p.ok),
            probes,
        }
    }
}

/// The tool sandbox's layers (`landlock`, `seccomp`, `namespaces`,
/// `filesystem_view`) from the sandbox's own probe, whose errors already
/// say why a layer is missing.
pub fn isolation_probes(support: &IsolationSupport) -> Vec<Probe> {
    vec![
        landlock_probe(&support.landlock_abi),
        seccomp_probe(&support.seccomp),
        namespaces_probe(&support.namespaces),
        filesystem_view_probe(&support.filesystem_view),
    ]
}

/// The user-mode network stack the tools' private network needs with
/// `--allow-network` (slirp4netns or pasta): which, its path and version,
/// or a warning naming what to install (runs without the network do not
/// need it).
pub fn network_stack_probe(
    stack: &Result<
        (subagent_sandbox::net::Stack, Option<String>),
        subagent_sandbox::net::NetworkError,
    >,
) -> Probe {
    match stack {
        Ok((stack, version)) => Probe::ok(
            "network_stack",
            format!(
                "{} {} at {}: tools get a private network with --allow-network",
                stack.kind.program_name(),
                version.as_deref().unwrap_or("(version unknown)"),
                stack.program.display()
            ),
        ),
        Err(subagent_sandbox::net::NetworkError::NoStack(
            subagent_sandbox::net::stack::NoStack::Chosen(why),
        )) => Probe::warning(
            "network_stack",
            "the chosen network stack is not here: runs with --allow-network and \
             python_execute are refused",
            why.clone(),
        ),
        Err(_) => Probe::warning(
            "network_stack",
            "neither slirp4netns nor pasta is on PATH: runs with --allow-network and \
             python_execute are refused",
            subagent_sandbox::net::STACK_INSTALL_HINT,
        ),
    }
}

/// Landlock filesystem rules, from the probed ABI version.
pub fn landlock_probe(abi: &Result<i32, String>) -> Probe {
    match abi {
        Ok(abi) => Probe::ok("landlock", format!("ABI {abi}")),
        Err(why) => Probe::missing(
            "landlock",
            why.as_str(),
            "use Linux 5.13+ with Landlock enabled: add `landlock` to the kernel's `lsm=` boot \
             parameter (check /sys/kernel/security/lsm)",
        ),
    }
}

/// seccomp filters.
pub fn seccomp_probe(support: &Result<(), String>) -> Probe {
    match support {
        Ok(()) => Probe::ok(
            "seccomp",
            "filters can be installed (syscall denylist, no setuid/setgid modes, no new \
             namespaces, unix and inet sockets only)",
        ),
        Err(why) => Probe::missing(
            "seccomp",
            why.as_str(),
            "use a kernel with CONFIG_SECCOMP_FILTER, and in a container allow installing filters \
             (e.g. `docker run --security-opt seccomp=unconfined`)",
        ),
    }
}

/// User, pid, mount, IPC, UTS, cgroup and network namespaces with a
/// fresh `/proc`.
pub fn namespaces_probe(support: &Result<(), String>) -> Probe {
    match support {
        Ok(()) => Probe::ok(
            "namespaces",
            "user, pid, mount, IPC, UTS, cgroup and network namespaces with a fresh /proc",
        ),
        Err(why) => Probe::missing(
            "namespaces",
            why.as_str(),
            "allow unprivileged user namespaces: `sysctl -w user.max_user_namespaces=15000` and, \
             where they exist, `sysctl -w kernel.unprivileged_userns_clone=1` and \
             `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`; in a container, \
             allow unshare and an unmasked /proc",
        ),
    }
}

/// The filesystem view: a tmpfs root with read-only binds, entered by
/// `pivot_root` in the namespaces.
pub fn filesystem_view_probe(support: &Result<(), String>) -> Probe {
    match support {
        Ok(()) => Probe::ok(
            "filesystem_view",
            "tmpfs root, read-only nosuid,nodev binds and pivot_root in a user namespace",
        ),
        Err(why) => Probe::missing(
            "filesystem_view",
            why.as_str(),
            "fix the namespaces probe first; then the view needs tmpfs, bind mounts and \
             pivot_root inside a user namespace (a container must not deny mount to it) and \
             a /tmp directory to stage on",
        ),
    }
}

/// The open-files limit after the start-up raise, and how many live
/// subagents it holds (a few fds each in the supervisor): missing when it
/// holds fewer than the default concurrency.
pub fn open_files_probe(limit: &std::io::Result<subagent_sandbox::OpenFilesLimit>) -> Probe {
    let limit = match limit {
        Ok(limit) => limit,
        Err(e) => {
            return Probe::missing(
                "open files",
                format!("cannot read the open-files limit: {e}"),
                "check RLIMIT_NOFILE (`ulimit -n`)",
            );
        }
    };
    let fits = crate::run::live_subagents_that_fit(limit.soft);
    let raised = limit
        .raised_from
        .map_or_else(String::new, |from| format!(", raised from {from}"));
    let detail = format!(
        "{} (hard limit {}{raised}): room for {fits} live subagents",
        limit.soft, limit.hard
    );
    if fits < crate::run::DEFAULT_MAX_CONCURRENT as u64 {
        Probe::missing(
            "open files",
            detail,
            "raise the hard limit: `ulimit -Hn` as root, `LimitNOFILE=` in a systemd unit, \
             `nofile` in /etc/security/limits.conf",
        )
    } else {
        Probe::ok("open files", detail)
    }
}

/// Per-child cgroups with memory and pids caps, from the sandbox's probe.
pub fn cgroup_probe(support: &Result<CgroupKind, String>) -> Probe {
    match support {
        Ok(CgroupKind::V1 { freezer, .. }) => Probe::ok(
            "cgroup",
            if freezer.is_some() {
                "v1, memory and pids controllers writable (freezer too)"
            } else {
                "v1, memory and pids controllers writable (no writable freezer)"
            },
        ),
        Ok(CgroupKind::V2 {
            dir,
            leaf: Some(leaf),
            ..
        }) => Probe::ok(
            "cgroup",
            format!(
                "v2, delegated to us at {}: the supervisor moves itself into {} and makes \
                 its children's cgroups beside it, with memory and pids caps",
                dir.display(),
                leaf.display()
            ),
        ),
        Ok(CgroupKind::V2 { .. }) => {
            Probe::ok("cgroup", "v2, memory and pids controllers writable")
        }
        // The enum is non_exhaustive: a future hierarchy is still usable.
        Ok(other) => Probe::ok("cgroup", format!("{other:?}")),
        Err(why) => Probe::missing(
            "cgroup",
            why.as_str(),
            "meanwhile memory is capped per process by RLIMIT_DATA (not per process tree) and \
             pids are not capped; for cgroup caps run the supervisor in a cgroup with the \
             memory and pids controllers delegated to its user, e.g. \
             `systemd-run --user --scope -p Delegate=yes subagent ...`",
        ),
    }
}

/// What running `python3` gave: its exit status and output, or why it could
/// not be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PythonOutcome {
    /// It exited; `success` is its status, `stdout`/`stderr` what it printed.
    Exited {
        /// Whether it exited 0.
        success: bool,
        /// What it printed on stdout.
        stdout: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// It could not be started (e.g. not on `PATH`).
    NotStarted(String),
    /// It did not finish within the timeout and was killed.
    TimedOut,
}

const PYTHON_FIX: &str = "install Python 3 and put `python3` on PATH, e.g. \
    `apt-get install python3` or `dnf install python3`; python_execute needs it";

/// The `python3` probe from what running it gave; ok detail is
/// `<version> at <executable>`.
pub fn python_probe_from(outcome: &PythonOutcome) -> Probe {
    match outcome {
        PythonOutcome::Exited {
            success: true,
            stdout,
            ..
        } => match stdout.trim().split_once(' ') {
            Some((version, executable)) if version.starts_with('3') => {
                Probe::ok("python3", format!("{version} at {executable}"))
            }
            _ => Probe::missing(
                "python3",
                format!("`python3` is not Python 3 (it printed {:?})", stdout.trim()),
                PYTHON_FIX,
            ),
        },
        PythonOutcome::Exited { stderr, .. } => Probe::missing(
            "python3",
            format!("`python3 -I -c ...` failed: {}", stderr.trim()),
            PYTHON_FIX,
        ),
        PythonOutcome::NotStarted(why) => Probe::missing(
            "python3",
            format!("cannot run `python3`: {why}"),
            PYTHON_FIX,
        ),
        PythonOutcome::TimedOut => Probe::missing(
            "python3",
            format!(
                "`python3` did not print its version within {}s",
                PYTHON_TIMEOUT.as_secs()
            ),
            PYTHON_FIX,
        ),
    }
}

/// Runs `python3 -I` (isolated: no user site, no `PYTHON*` variables, as
/// the tool sandbox runs it) to learn its version and real executable.
pub fn run_python(timeout: Duration) -> PythonOutcome {
    let child = Command::new("python3")
        .args([
            "-I",
            "-c",
            "import sys; print(sys.version.split()[0], sys.executable)",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => return PythonOutcome::NotStarted(e.to_string()),
    };
    // Polling is enough: the output is one short line, far below a pipe's
    // buffer, so the child cannot block on a full pipe while we wait.
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return PythonOutcome::TimedOut;
            }
            Err(e) => return PythonOutcome::NotStarted(e.to_string()),
        }
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    if let Some(mut out) = child.stdout.take() {
        let _ = out.read_to_string(&mut stdout);
    }
    if let Some(mut err) = child.stderr.take() {
        let _ = err.read_to_string(&mut stderr);
    }
    PythonOutcome::Exited {
        success: status.success(),
        stdout,
        stderr,
    }
}

const SESSIONS_FIX: &str = "pass `--sessions-dir` with a writable directory, or set \
    SUBAGENT_HOME (sessions go to $SUBAGENT_HOME/sessions)";

/// The sessions dir exists or can be created, and a file can be created
/// and removed in it. `None` means no default could be found.
pub fn sessions_dir_probe(dir: Option<&Path>) -> Probe {
    let Some(dir) = dir else {
        return Probe::missing(
            "sessions-dir",
            "no default sessions dir: none of SUBAGENT_HOME, XDG_STATE_HOME, HOME is set",
            SESSIONS_FIX,
        );
    };
    // A run creates it the same way, so creating it here changes nothing a
    // run would not.
    if let Err(e) = std::fs::create_dir_all(dir) {
        return Probe::missing(
            "sessions-dir",
            format!("cannot create {}: {e}", dir.display()),
            SESSIONS_FIX,
        );
    }
    let probe_file = dir.join(format!(".subagent-doctor-{}", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe_file)
        .and_then(|_| std::fs::remove_file(&probe_file));
    match written {
        Ok(()) => Probe::ok("sessions-dir", format!("{} is writable", dir.display())),
        Err(e) => Probe::missing(
            "sessions-dir",
            format!("cannot write in {}: {e}", dir.display()),
            SESSIONS_FIX,
        ),
    }
}

const WORKER_FIX: &str = "install subagent with `cargo install --locked --path crates/cli` \
    (it puts subagent-worker beside subagent) or build it (`cargo build -p subagent-cli`), or \
    pass `--worker PATH` / set SUBAGENT_WORKER";

/// The worker binary exists, is a file and is executable. `None` means its
/// default place could not be worked out.
pub fn worker_probe(worker: Option<&Path>) -> Probe {
    let Some(worker) = worker else {
        return Probe::missing(
            "worker",
            "cannot locate subagent-worker next to this binary",
            WORKER_FIX,
        );
    };
    match std::fs::metadata(worker) {
        Err(e) => Probe::missing("worker", format!("{}: {e}", worker.display()), WORKER_FIX),
        Ok(meta) if !meta.is_file() => Probe::missing(
            "worker",
            format!("{} is not a file", worker.display()),
            WORKER_FIX,
        ),
        Ok(_) => match nix::unistd::access(worker, nix::unistd::AccessFlags::X_OK) {
            Ok(()) => Probe::ok("worker", format!("{} is executable", worker.display())),
            Err(e) => Probe::missing(
                "worker",
                format!("{} is not executable: {e}", worker.display()),
                format!("`chmod +x {}`, or {WORKER_FIX}", worker.display()),
            ),
        },
    }
}

#[path = "doctor_layer.rs"]
mod layer;
pub use layer::{layer_support, workspace_layer_probe};

#[path = "doctor_mcp.rs"]
mod mcp;
pub use mcp::mcp_server_probes;

#[path = "doctor_endpoint.rs"]
mod endpoint;
pub use endpoint::{
    ENDPOINT_TIMEOUT, HttpTarget, endpoint_probes, endpoint_probes_asking, model_ids,
    parse_http_url,
};

#[cfg(test)]
#[path = "doctor_tests.rs"]
mod tests;
