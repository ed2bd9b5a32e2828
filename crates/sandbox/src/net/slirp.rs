//! The lighter user-mode network stack of the private network:
//! `slirp4netns` (Debian's `slirp4netns` package), attached to the
//! holder's namespaces.
//!
//! It starts in a few milliseconds of CPU where pasta takes tens (pasta
//! clears large connection tables at start), so it is the stack a run
//! gets when both are installed ([`super::stack`]). Like pasta it runs as
//! the worker's child, in the worker's process group and cgroup, gets the
//! holder's namespaces as fds 3 and 4, and says it is ready on a pipe (fd
//! 5); it also holds the read end of a second pipe (fd 6) whose write end
//! only we hold, and exits when that closes, so it cannot outlive the
//! handle even if a kill were missed.
//!
//! Its network is [`SLIRP_CIDR`] (a benchmarking range, which nobody's LAN
//! uses and the table refuses unless private networks are allowed) and
//! `fd00::/64`; DNS goes to its built-in forwarder at `.3` / `fd00::3`.
//! The gateway (`.2`) reaches the host's loopback only with private
//! networks allowed (`--disable-host-loopback` otherwise).
//!
//! This module starts slirp4netns and stops it; it decides no policy.

use std::fs::File;
use std::io::{self, Read};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The program's name on `PATH`.
pub const SLIRP_PROGRAM: &str = "slirp4netns";

/// The IPv4 network slirp4netns gives the namespace.
pub const SLIRP_CIDR: &str = "198.18.0.0/24";
/// Its gateway: the host's loopback, with private networks allowed.
pub const SLIRP_GATEWAY_V4: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
/// Its DNS forwarder.
pub const SLIRP_DNS_V4: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 3);
/// Its IPv6 DNS forwarder (slirp4netns's fixed `fd00::/64` network).
pub const SLIRP_DNS_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 3);
/// Its IPv6 gateway.
pub const SLIRP_GATEWAY_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 2);
/// The namespace's IPv6 address, set by us: slirp4netns only advertises
/// the prefix, and the advertisement takes seconds to act on.
pub const SLIRP_ADDRESS_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 0x100);
/// The tap device's index: the holder makes it, the first device of a
/// fresh namespace after `lo` (1).
pub(crate) const TAP_INDEX: u32 = 2;

/// The requests that give the namespace IPv6 at once (address and default
/// route), for the holder to send once slirp4netns made its tap device.
pub(crate) fn ipv6_setup() -> Vec<super::netlink::Request> {
    vec![
        super::netlink::add_address_v6(TAP_INDEX, SLIRP_ADDRESS_V6, 64),
        super::netlink::add_default_route_v6(TAP_INDEX, SLIRP_GATEWAY_V6),
    ]
}

/// Longest wait for slirp4netns to configure the namespace.
const READY_TIMEOUT: Duration = Duration::from_secs(10);

/// How slirp4netns is told to run.
#[derive(Debug, Clone)]
pub(crate) struct SlirpArgs {
    pub(crate) program: PathBuf,
    /// Let the gateway reach the host's loopback.
    pub(crate) host_loopback: bool,
}

/// A running slirp4netns.
#[derive(Debug)]
pub(crate) struct Slirp {
    child: Child,
    // Closing it tells slirp4netns to exit.
    _exit: OwnedFd,
}

impl Slirp {
    /// Starts slirp4netns for the namespaces `user` and `net`, its log in
    /// `dir`, and waits until it configured them. For the spawner thread.
    pub(crate) fn start(
        args: &SlirpArgs,
        user: &OwnedFd,
        net: &OwnedFd,
        dir: &Path,
    ) -> io::Result<Slirp> {
        let (ready_read, ready_write) = nix::unistd::pipe().map_err(io::Error::from)?;
        let (exit_read, exit_write) = nix::unistd::pipe().map_err(io::Error::from)?;
        let log_path = dir.join("slirp4netns.log");
        let log = File::create(&log_path)?;
        let mut command = Command::new(&args.program);
        command
            .args(arguments(args))
            // Not the worker's directory (the workspace): it needs none.
            .current_dir("/")
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        let fds = [
            user.as_raw_fd(),
            net.as_raw_fd(),
            ready_write.as_raw_fd(),
            exit_read.as_raw_fd(),
        ];
        // SAFETY: the hook runs in the forked child before exec and makes
        // only async-signal-safe calls.
        unsafe {
            command.pre_exec(move || {
                libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                );
                // Moved above 6 first, so no dup2 below overwrites a
                // source still to be placed; dup2 leaves the copies
                // without close-on-exec.
                let mut high = [0; 4];
                for (slot, source) in high.iter_mut().zip(fds) {
                    *slot = libc::fcntl(source, libc::F_DUPFD, 7);
                    if *slot < 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                for (target, source) in (3..).zip(high) {
                    if libc::dup2(source, target) != target {
                        return Err(io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let child = command.spawn()?;
        drop(ready_write);
        drop(exit_read);
        let mut slirp = Slirp {
            child,
            _exit: exit_write,
        };
        match wait_ready(&ready_read, &mut slirp.child) {
            Ok(()) => Ok(slirp),
            Err(e) => {
                let mut log = String::new();
                let _ = File::open(&log_path).and_then(|mut f| f.read_to_string(&mut log));
                let said = log
                    .lines()
                    .rfind(|l| !l.trim().is_empty())
                    .unwrap_or("")
                    .trim()
                    .to_owned();
                Err(io::Error::other(if said.is_empty() {
                    format!("slirp4netns did not set up the tools' private network: {e}")
                } else {
                    format!(
                        "slirp4netns did not set up the tools' private network: {e}: it said: \
                         {said}"
                    )
                }))
            }
        }
    }

    /// Its pid (for tests that check it is gone).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Slirp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn arguments(args: &SlirpArgs) -> Vec<String> {
    let mut out: Vec<String> = [
        "--configure",
        "--mtu=65520",
        "--enable-ipv6",
        "--ready-fd=5",
        "--exit-fd=6",
        "--userns-path=/proc/self/fd/3",
        "--netns-type=path",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    out.push(format!("--cidr={SLIRP_CIDR}"));
    if !args.host_loopback {
        out.push("--disable-host-loopback".to_owned());
    }
    out.push("/proc/self/fd/4".to_owned());
    out.push(super::holder::TAP_NAME.to_owned());
    out
}

/// Waits until slirp4netns wrote to the ready pipe (ready) or exited
/// (failed).
fn wait_ready(ready: &OwnedFd, child: &mut Child) -> io::Result<()> {
    let status = crate::unix::wait_readable_or_exit(ready, child, READY_TIMEOUT)?;
    if status {
        let mut byte = [0u8; 1];
        // SAFETY: read of one byte into a live buffer from a live fd.
        let n = unsafe { libc::read(ready.as_raw_fd(), byte.as_mut_ptr().cast(), 1) };
        if n == 1 {
            return Ok(());
        }
    }
    match child.try_wait()? {
        Some(status) => Err(io::Error::other(format!("it exited ({status})"))),
        None => Err(io::Error::other(
            "it closed its ready pipe without writing to it",
        )),
    }
}
