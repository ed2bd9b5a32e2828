//! Which user-mode network stack connects a run's private network to the
//! outside: slirp4netns when it is installed (it starts with a few
//! milliseconds of CPU where pasta takes tens), else pasta; but pasta
//! first for a run that may reach the host's loopback (private networks
//! allowed), since only pasta shows the host's loopback ports at the
//! namespace's `127.0.0.1`, where programs look for them (slirp4netns
//! shows them at its gateway). `SUBAGENT_NETWORK_STACK=pasta` or
//! `=slirp4netns` picks one. Each stack's DNS forwarder and how it reaches
//! the host's loopback differ, so this module also says where DNS goes.
//!
//! It finds and starts a stack; which ranges are refused is
//! [`super::private`]'s decision.

use std::ffi::OsStr;
use std::net::IpAddr;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use super::pasta::{self, Pasta, PastaArgs};
use super::slirp::{self, Slirp, SlirpArgs};

/// The variable that picks a stack by name.
pub const STACK_VARIABLE: &str = "SUBAGENT_NETWORK_STACK";

/// What to install when no stack is found, for one-line refusals.
pub const STACK_INSTALL_HINT: &str = "install slirp4netns or pasta (Debian and Ubuntu: `apt-get \
     install slirp4netns`, or `apt-get install passt` for pasta; Fedora: `dnf install \
     slirp4netns`)";

/// A user-mode network stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StackKind {
    /// slirp4netns: the lighter one, preferred.
    Slirp4netns,
    /// pasta (package passt).
    Pasta,
}

impl StackKind {
    /// The program's name, as `SUBAGENT_NETWORK_STACK` names it.
    pub fn program_name(self) -> &'static str {
        match self {
            StackKind::Slirp4netns => slirp::SLIRP_PROGRAM,
            StackKind::Pasta => pasta::PASTA_PROGRAM,
        }
    }

    /// Where tool processes send DNS queries.
    pub(crate) fn dns_servers(self) -> [IpAddr; 2] {
        match self {
            StackKind::Slirp4netns => [slirp::SLIRP_DNS_V4.into(), slirp::SLIRP_DNS_V6.into()],
            StackKind::Pasta => [pasta::DNS_FORWARD_V4.into(), pasta::DNS_FORWARD_V6.into()],
        }
    }

    /// Where tool processes reach the host's loopback when private
    /// networks are allowed, for messages and docs.
    pub fn host_loopback_address(self) -> &'static str {
        match self {
            StackKind::Slirp4netns => "198.18.0.2 (the gateway)",
            StackKind::Pasta => "127.0.0.1 (each port bound on the host's loopback)",
        }
    }
}

/// A stack found on `PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stack {
    /// Which.
    pub kind: StackKind,
    /// Its program.
    pub program: PathBuf,
}

/// Why no stack can be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoStack {
    /// Neither is on `PATH`.
    Missing,
    /// `SUBAGENT_NETWORK_STACK` names one that is not on `PATH`, or no
    /// stack at all.
    Chosen(String),
}

impl std::fmt::Display for NoStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoStack::Missing => write!(
                f,
                "the tools' network needs a private network namespace, and neither `slirp4netns` \
                 nor `pasta` is on PATH: {STACK_INSTALL_HINT}"
            ),
            NoStack::Chosen(message) => f.write_str(message),
        }
    }
}

/// The stack a run gets: `choice` (the value of `SUBAGENT_NETWORK_STACK`)
/// when given, else slirp4netns, else pasta (pasta first when
/// `host_loopback`), found on `path` (a `PATH` value; `None`: this
/// process's).
pub fn find_stack(
    choice: Option<&OsStr>,
    path: Option<&OsStr>,
    host_loopback: bool,
) -> Result<Stack, NoStack> {
    let find = |kind: StackKind| {
        find_program(kind.program_name(), path).map(|program| Stack { kind, program })
    };
    match choice.map(|c| c.to_string_lossy().trim().to_owned()) {
        Some(name) if !name.is_empty() && name != "auto" => {
            let kind = [StackKind::Slirp4netns, StackKind::Pasta]
                .into_iter()
                .find(|k| k.program_name() == name)
                .ok_or_else(|| {
                    NoStack::Chosen(format!(
                        "{STACK_VARIABLE}={name} names no network stack: set it to slirp4netns, \
                         pasta or auto, or unset it"
                    ))
                })?;
            find(kind).ok_or_else(|| {
                NoStack::Chosen(format!(
                    "{STACK_VARIABLE}={name}, and `{name}` is not on PATH: install it, or unset \
                     {STACK_VARIABLE} to use the other stack"
                ))
            })
        }
        _ => {
            let (first, second) = if host_loopback {
                (StackKind::Pasta, StackKind::Slirp4netns)
            } else {
                (StackKind::Slirp4netns, StackKind::Pasta)
            };
            find(first).or_else(|| find(second)).ok_or(NoStack::Missing)
        }
    }
}

/// The stack this process would start for a run without private networks
/// (its `PATH` and `SUBAGENT_NETWORK_STACK`); whether any can be had.
pub fn current_stack() -> Result<Stack, NoStack> {
    current_stack_for(false)
}

/// The stack this process would start for a run that may (`host_loopback`)
/// or may not reach the host's loopback.
pub fn current_stack_for(host_loopback: bool) -> Result<Stack, NoStack> {
    find_stack(
        std::env::var_os(STACK_VARIABLE).as_deref(),
        None,
        host_loopback,
    )
}

fn find_program(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    let path = path.map_or_else(|| std::env::var_os("PATH"), |p| Some(p.to_owned()))?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// What the stack's `--version` says first, when it runs.
pub fn stack_version(stack: &Stack) -> Option<String> {
    let out = std::process::Command::new(&stack.program)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next()?.trim();
    let version = line
        .strip_prefix(stack.kind.program_name())
        .unwrap_or(line)
        .trim();
    let version = version.strip_prefix("version ").unwrap_or(version).trim();
    (!version.is_empty()).then(|| version.to_owned())
}

/// A running stack.
#[derive(Debug)]
pub(crate) enum RunningStack {
    Slirp(Slirp),
    Pasta(Pasta),
}

impl RunningStack {
    /// Starts `stack` for the holder's namespaces, its files in `dir`.
    /// For the spawner thread.
    pub(crate) fn start(
        stack: &Stack,
        host_loopback: bool,
        user: &OwnedFd,
        net: &OwnedFd,
        dir: &Path,
    ) -> std::io::Result<RunningStack> {
        match stack.kind {
            StackKind::Slirp4netns => {
                let args = SlirpArgs {
                    program: stack.program.clone(),
                    host_loopback,
                };
                Slirp::start(&args, user, net, dir).map(RunningStack::Slirp)
            }
            StackKind::Pasta => {
                let args = PastaArgs {
                    program: stack.program.clone(),
                    dns_forward: StackKind::Pasta.dns_servers().to_vec(),
                    host_loopback,
                };
                Pasta::start(&args, user, net, dir).map(RunningStack::Pasta)
            }
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        match self {
            RunningStack::Slirp(s) => s.pid(),
            RunningStack::Pasta(p) => p.pid(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(programs: &[&str]) -> tempfile::TempDir {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        for name in programs {
            let path = dir.path().join(name);
            std::fs::write(&path, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        dir
    }

    #[test]
    fn slirp4netns_is_preferred_and_the_variable_picks_either() {
        let both = dir_with(&["slirp4netns", "pasta"]);
        let path = Some(both.path().as_os_str());
        let kind = |choice: Option<&str>, host_loopback| {
            find_stack(choice.map(OsStr::new), path, host_loopback)
                .unwrap()
                .kind
        };
        assert_eq!(kind(None, false), StackKind::Slirp4netns);
        assert_eq!(kind(Some("auto"), false), StackKind::Slirp4netns);
        assert_eq!(kind(None, true), StackKind::Pasta);
        assert_eq!(kind(Some("pasta"), false), StackKind::Pasta);
        assert_eq!(kind(Some("slirp4netns"), true), StackKind::Slirp4netns);
        let pasta_only = dir_with(&["pasta"]);
        let path = Some(pasta_only.path().as_os_str());
        assert_eq!(
            find_stack(None, path, false).unwrap().kind,
            StackKind::Pasta
        );
        let slirp_only = dir_with(&["slirp4netns"]);
        assert_eq!(
            find_stack(None, Some(slirp_only.path().as_os_str()), true)
                .unwrap()
                .kind,
            StackKind::Slirp4netns
        );
        let err = find_stack(Some(OsStr::new("slirp4netns")), path, false).unwrap_err();
        assert!(err.to_string().contains("not on PATH"), "{err}");
        let err = find_stack(Some(OsStr::new("vde")), path, false).unwrap_err();
        assert!(
            err.to_string().contains("slirp4netns, pasta or auto"),
            "{err}"
        );
        let none = dir_with(&[]);
        let err = find_stack(None, Some(none.path().as_os_str()), false).unwrap_err();
        assert_eq!(err, NoStack::Missing);
        assert!(
            err.to_string().contains("apt-get install slirp4netns"),
            "{err}"
        );
    }
}
