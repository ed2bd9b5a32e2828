//! Asking `python3` where it lives, confined as a tool process is.
//!
//! `python3` on the supervisor's `PATH` may be a launcher (pyenv's shim is a
//! bash script) in a directory a tool process could write: with the home
//! directory as a workspace, a tool rewrote `~/.pyenv/shims/python3` and the
//! next run's question ran it on the host as the supervisor's user (issue
//! 32). So the question runs under the tool sandbox: its own namespaces, a
//! filesystem view of the system paths and the launcher's reach
//! ([`super::reach`]) read-only, nothing writable but a private tmp dir,
//! no network, Landlock, seccomp, no capabilities, an allowlisted
//! environment, memory and pids caps, capped output and a deadline. A
//! rewritten launcher runs confined at worst, and its answer is checked.
//!
//! The question's working directory is the view's `/`, never a workspace:
//! a launcher picks the version from the working directory's files (pyenv
//! reads `.python-version` there and in every parent).
//!
//! This module runs the question and returns its output; it does not
//! parse or judge the answer.

use std::ffi::OsString;
use std::time::Duration;

use super::reach::Launcher;
use crate::isolation::Isolation;
use crate::kill::KillReason;
use crate::spec::{CaptureLimits, ResourceLimits, SandboxPolicy, SandboxSpec};

/// Longest the interpreter may take to say where it lives: a cold start
/// of a launcher like pyenv takes well under a second.
const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

/// The working directory of the question: the view's root, no workspace.
const NEUTRAL_DIR: &str = "/";

/// What the question asks the interpreter.
const PROBE_CODE: &str = "import sys, json; print(json.dumps([sys.executable, sys.prefix, \
     sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]))";

/// Memory of the question's whole tree: bash scripts and one interpreter.
const MEMORY_BYTES: u64 = 512 * 1024 * 1024;

/// Processes and threads of the question's tree: pyenv's shim runs a few
/// dozen short-lived subshells, one after another.
const PIDS: u64 = 64;

/// Output kept of each stream, and the hard cap past which it is stopped:
/// the answer is one short line.
const OUTPUT_BYTES: u64 = 64 * 1024;

/// Time between SIGTERM and SIGKILL of the question's tree.
const KILL_GRACE: Duration = Duration::from_millis(500);

/// Variables the question gets from the supervisor's environment besides
/// `TMPDIR` (its private tmp dir): what a launcher reads to pick a
/// version, never a key.
const ENV_ALLOWLIST: &[&str] = &["PATH", "HOME", "LANG", "LC_ALL", "TZ", "USER"];

/// Prefixes of variables that choose a launcher's version
/// (`PYENV_VERSION`, `ASDF_PYTHON_VERSION`, ...).
const ENV_PREFIXES: &[&str] = &["PYENV_", "ASDF_"];

/// Runs the question confined; its stdout, or why it gave none.
pub(crate) async fn ask(launcher: &Launcher) -> Result<String, String> {
    let private_tmp = tempfile::Builder::new()
        .prefix("subagent-python-question-")
        .tempdir()
        .map_err(|e| format!("cannot create a private tmp dir for asking python3: {e}"))?;
    let spec = spec(launcher, private_tmp.path().as_os_str());
    let child = crate::spawn(spec)
        .await
        .map_err(|e| format!("python3 could not be asked where it lives: {e}"))?;
    let missing = &child.status().not_applied;
    if !missing.is_empty() {
        let layers: Vec<&str> = missing.iter().map(|n| n.protection.as_str()).collect();
        tracing::warn!(
            ?layers,
            "python3 is asked where it lives without these layers of the tool sandbox"
        );
    }
    let killer = child.killer();
    let wait = child.wait();
    tokio::pin!(wait);
    let exit = tokio::select! {
        exit = &mut wait => exit,
        () = tokio::time::sleep(PROBE_TIMEOUT) => {
            killer.terminate(KillReason::Timeout);
            wait.await;
            return Err(format!(
                "python3 ({}) did not answer within {} s when asked where it lives",
                launcher.program.display(),
                PROBE_TIMEOUT.as_secs()
            ));
        }
    };
    drop(private_tmp);
    if !exit.termination.is_success() {
        return Err(format!(
            "python3 ({}) failed when asked where it lives ({}), run confined to {} and the \
             system paths: {}; put the interpreter itself (or a symlink to it) first on the \
             supervisor's PATH",
            launcher.program.display(),
            exit.termination.reason(),
            launcher.describe_reach(),
            exit.stderr.lossy_text().trim()
        ));
    }
    Ok(exit.stdout.lossy_text())
}

fn spec(launcher: &Launcher, private_tmp: &std::ffi::OsStr) -> SandboxSpec {
    let mut spec = SandboxSpec::new(&launcher.program, NEUTRAL_DIR);
    spec.args = vec!["-I".into(), "-c".into(), PROBE_CODE.into()];
    spec.env = std::env::vars_os()
        .filter(|(name, _)| {
            let name = name.to_string_lossy();
            ENV_ALLOWLIST.contains(&name.as_ref())
                || ENV_PREFIXES.iter().any(|p| name.starts_with(p))
        })
        .collect();
    spec.env
        .push((OsString::from("TMPDIR"), private_tmp.to_owned()));
    spec.limits = ResourceLimits {
        memory_bytes: Some(MEMORY_BYTES),
        pids: Some(PIDS),
        file_size_bytes: Some(OUTPUT_BYTES),
        open_files: Some(256),
        cpu_seconds: Some(PROBE_TIMEOUT.as_secs()),
    };
    spec.capture = CaptureLimits {
        stdout_hard_bytes: OUTPUT_BYTES,
        stderr_hard_bytes: OUTPUT_BYTES,
        keep_head_bytes: 4 * 1024,
        keep_tail_bytes: 4 * 1024,
    };
    spec.grace = KILL_GRACE;
    // As python_execute on this machine: a layer the kernel lacks is left
    // out, not a reason to have no interpreter.
    spec.policy = SandboxPolicy::BestEffort;
    let tmp = std::path::PathBuf::from(private_tmp);
    let mut isolation = Isolation::strict(vec![tmp.clone()]);
    isolation
        .read_only
        .extend(launcher.read_only.iter().cloned());
    isolation.private_tmp = Some(tmp);
    spec.isolation = Some(isolation);
    spec
}
