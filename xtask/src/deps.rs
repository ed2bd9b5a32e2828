//! Tools the tasks need from outside cargo (cmake, a C++ compiler, pip, tar,
//! cargo-nextest), and when xtask may install them itself.
//!
//! System packages are installed with apt-get only as root, and only when
//! `CI` is set, `--install-deps` was given, or for `cargo xtask demo` (which
//! says so in its help and takes `--no-install-deps`): a developer's machine
//! is never changed behind their back by any other task. Otherwise a missing
//! tool is an error that names the package to install and the command that
//! lets xtask install it.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Result, bail};

use crate::cmd;

/// Whether missing system packages may be installed.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    may_install: bool,
    /// How the user lets xtask install, in the words of the command they
    /// ran: the demo installs by default, the other tasks take a flag.
    how_to_allow: &'static str,
}

impl Policy {
    /// Installing is allowed with `--install-deps` or in CI (`CI` set and not
    /// `false`/`0`).
    pub fn from_flag(install_deps: bool) -> Self {
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
        Self {
            may_install: install_deps || ci,
            how_to_allow: "rerun as root with --install-deps",
        }
    }

    /// The demo is the one command a newcomer runs on a fresh machine: it
    /// installs what is missing (as root) unless told not to.
    pub fn for_demo(no_install_deps: bool) -> Self {
        Self {
            may_install: !no_install_deps,
            how_to_allow: "rerun as root without --no-install-deps",
        }
    }
}

/// A command-line tool and the Debian package that provides it.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// What to call it in messages.
    pub name: &'static str,
    /// Program to probe.
    pub program: &'static str,
    /// Arguments that make it exit 0 when it works.
    pub probe_args: &'static [&'static str],
    /// Debian package to install.
    pub package: &'static str,
}

/// cmake, to build llama.cpp.
pub const CMAKE: Tool = Tool {
    name: "cmake",
    program: "cmake",
    probe_args: &["--version"],
    package: "cmake",
};

/// A C++ compiler, for llama.cpp and for libFuzzer (built by libfuzzer-sys).
pub const CXX: Tool = Tool {
    name: "a C++ compiler",
    program: "c++",
    probe_args: &["--version"],
    package: "g++",
};

/// pip, to download the pinned PyPI packages.
pub const PIP: Tool = Tool {
    name: "pip",
    program: "python3",
    probe_args: &["-m", "pip", "--version"],
    package: "python3-pip",
};

/// curl, the baseline of the benchmarks' model rows.
pub const CURL: Tool = Tool {
    name: "curl",
    program: "curl",
    probe_args: &["--version"],
    package: "curl",
};

/// npm, to install pi for the benchmarks' comparison (Node.js comes with it).
pub const NPM: Tool = Tool {
    name: "npm",
    program: "npm",
    probe_args: &["--version"],
    package: "npm",
};

/// A C compiler and static libc, for the benchmarks' static no-op baseline.
pub const CC: Tool = Tool {
    name: "a C compiler",
    program: "cc",
    probe_args: &["--version"],
    package: "gcc",
};

/// bubblewrap, the reference the tool sandbox's spawn rows are measured
/// against (the same filesystem view and namespaces, by another program).
pub const BWRAP: Tool = Tool {
    name: "bubblewrap",
    program: "bwrap",
    probe_args: &["--version"],
    package: "bubblewrap",
};

/// pasta (Debian's passt), the user-mode network stack of the tools'
/// private network with `--allow-network` (crates/sandbox/src/net).
pub const PASTA: Tool = Tool {
    name: "pasta",
    program: "pasta",
    probe_args: &["--version"],
    package: "passt",
};

/// zsh, which parses the script of `subagent completions zsh` in its test.
pub const ZSH: Tool = Tool {
    name: "zsh",
    program: "zsh",
    probe_args: &["--version"],
    package: "zsh",
};

/// fish, which parses the script of `subagent completions fish` in its test.
pub const FISH: Tool = Tool {
    name: "fish",
    program: "fish",
    probe_args: &["--version"],
    package: "fish",
};

/// man (man-db), which renders every page of `subagent man` in its test.
pub const MAN: Tool = Tool {
    name: "man",
    program: "man",
    probe_args: &["--version"],
    package: "man-db",
};

/// slirp4netns, the lighter user-mode network stack of the tools' private
/// network (preferred when installed; crates/sandbox/src/net/stack.rs).
pub const SLIRP4NETNS: Tool = Tool {
    name: "slirp4netns",
    program: "slirp4netns",
    probe_args: &["--version"],
    package: "slirp4netns",
};

/// tar, to unpack the llama.cpp source archive.
pub const TAR: Tool = Tool {
    name: "tar",
    program: "tar",
    probe_args: &["--version"],
    package: "tar",
};

/// python3's venv module, in which `cargo xtask dist` installs maturin and
/// its check installs the wheel.
pub const PYTHON_VENV: Tool = Tool {
    name: "python3's venv",
    program: "python3",
    probe_args: &["-c", "import ensurepip, venv"],
    package: "python3-venv",
};

/// dpkg-shlibdeps, with which cargo-deb works out the `.deb`'s Depends
/// (the libc version the binaries need).
pub const DPKG_DEV: Tool = Tool {
    name: "dpkg-shlibdeps",
    program: "dpkg-shlibdeps",
    probe_args: &["--version"],
    package: "dpkg-dev",
};

/// True when this process runs as root.
pub fn is_root() -> bool {
    cmd::stdout_of(Command::new("id").arg("-u")).is_ok_and(|uid| uid.trim() == "0")
}

/// `apt-get update` runs at most once per xtask run.
static APT_UPDATED: AtomicBool = AtomicBool::new(false);

fn apt_install(package: &str) -> Result<()> {
    if !APT_UPDATED.swap(true, Ordering::SeqCst) {
        cmd::run(
            Command::new("apt-get")
                .arg("update")
                .env("DEBIAN_FRONTEND", "noninteractive"),
        )?;
    }
    cmd::run(
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", package])
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
}

/// Makes sure each tool works, installing the missing ones when `policy`
/// allows it; otherwise fails naming every missing package at once.
pub fn ensure(tools: &[Tool], policy: Policy) -> Result<()> {
    let missing: Vec<Tool> = tools
        .iter()
        .copied()
        .filter(|t| !cmd::succeeds(t.program, t.probe_args))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let packages: Vec<&str> = missing.iter().map(|t| t.package).collect();
    let names: Vec<&str> = missing.iter().map(|t| t.name).collect();
    let root = is_root();
    if !policy.may_install || !root {
        bail!("{}", missing_message(&names, &packages, policy, root));
    }
    for tool in &missing {
        eprintln!(
            "xtask: {} is missing; installing {}",
            tool.name, tool.package
        );
        apt_install(tool.package)?;
        if !cmd::succeeds(tool.program, tool.probe_args) {
            bail!(
                "installed {} but `{} {}` still fails",
                tool.package,
                tool.program,
                tool.probe_args.join(" ")
            );
        }
    }
    Ok(())
}

/// Why xtask stops instead of installing, and the two ways on: install the
/// packages by hand, or let xtask do it.
fn missing_message(names: &[&str], packages: &[&str], policy: Policy, root: bool) -> String {
    let names = names.join(", ");
    let packages = packages.join(" ");
    if policy.may_install && !root {
        format!(
            "missing {names}, and xtask installs system packages only as root: run \
             `sudo apt-get install -y {packages}`, then rerun"
        )
    } else {
        format!(
            "missing {names}: install with `apt-get install -y {packages}`, or {} to let \
             xtask install it",
            policy.how_to_allow
        )
    }
}

/// Makes sure `cargo nextest` works, installing it from crates.io if needed.
pub fn ensure_nextest() -> Result<()> {
    let works = || {
        cmd::cargo()
            .args(["nextest", "--version"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if works() {
        return Ok(());
    }
    eprintln!("xtask: cargo-nextest is missing; installing it (a few minutes)");
    cmd::run(cmd::cargo().args(["install", "cargo-nextest", "--locked"]))?;
    if !works() {
        bail!(
            "installed cargo-nextest but `cargo nextest --version` still fails; \
             is cargo's bin directory on PATH?"
        );
    }
    Ok(())
}

#[cfg(test)]
#[path = "deps_tests.rs"]
mod tests;
