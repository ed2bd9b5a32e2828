//! bubblewrap doing the tool sandbox's filesystem view, as the reference
//! the `spawn.tool_sandbox` rows stand beside: the same system paths
//! read-only (symlinks as symlinks), a tmpfs `/tmp`, a minimal `/dev`, a
//! fresh `/proc`, the workspace read-write, every namespace, no
//! capabilities. It has no Landlock and no seccomp filter, so it does a
//! little less than ours.
//!
//! bubblewrap is not a project dependency: the rows are left out (with a
//! note) where `bwrap` is not installed (Debian package `bubblewrap`).

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Result, bail};
use subagent_sandbox::SYSTEM_READ_ONLY_PATHS;

/// Where bubblewrap is expected.
const BWRAP: &str = "/usr/bin/bwrap";

/// Whether `bwrap` is installed.
pub fn available() -> bool {
    Path::new(BWRAP).exists()
}

/// A `bwrap` command running `program args` in the view over `workspace`.
pub fn command(workspace: &Path, program: &str, args: &[&str]) -> Command {
    let mut command = Command::new(BWRAP);
    command.args([
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
    ]);
    for path in SYSTEM_READ_ONLY_PATHS {
        if path.starts_with("/dev/") {
            continue;
        }
        match std::fs::read_link(path) {
            Ok(target) => {
                command.arg("--symlink").arg(target).arg(path);
            }
            Err(_) => {
                command.args(["--ro-bind-try", path, path]);
            }
        }
    }
    command
        .args(["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"])
        .arg("--bind")
        .arg(workspace)
        .arg(workspace)
        .arg("--chdir")
        .arg(workspace)
        .arg("--")
        .arg(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// Runs `program args` under bubblewrap's view and waits for it.
pub fn run(workspace: &Path, program: &str, args: &[&str]) -> Result<()> {
    let status = command(workspace, program, args).status()?;
    if !status.success() {
        bail!("bwrap {program} failed: {status}");
    }
    Ok(())
}
