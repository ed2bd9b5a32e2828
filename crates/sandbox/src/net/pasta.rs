//! The user-mode network stack of the private network: `pasta` (Debian's
//! `passt` package), attached to the holder's namespaces.
//!
//! It runs in the foreground as the worker's child, in the worker's process
//! group and cgroup (so the run's tree kill takes it along; its
//! parent-death signal does not survive pasta's change of credentials),
//! gets the
//! holder's namespaces as fds 3 and 4 (the worker cannot name them by
//! `/proc/<holder>/ns`, see [`super::holder`]), and says it is ready by
//! writing its pid file, which is a FIFO here: the worker waits on that
//! write and on pasta's exit, whichever comes first, with no polling.
//!
//! No port is forwarded from the host into the namespace; with private
//! networks allowed, TCP connections to a loopback port of the namespace
//! go to the same port of the host's loopback (`-T auto`: the ports bound
//! on the host, rescanned every second); without, nothing is, and the
//! gateway address is not mapped to the host (`--no-map-gw`).
//!
//! This module starts pasta and stops it; it decides no policy.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The program's name on `PATH`.
pub const PASTA_PROGRAM: &str = "pasta";

/// The address tool processes send DNS queries to (UDP port 53 only)
/// under pasta, which maps it to the host's resolver. In the link-local
/// range, which only `--allow-link-local-networks` opens, so otherwise only
/// the rule that lets DNS to it through reaches it.
pub const DNS_FORWARD_V4: std::net::Ipv4Addr = std::net::Ipv4Addr::new(169, 254, 0, 53);
/// The IPv6 twin of [`DNS_FORWARD_V4`], in the unique-local range.
pub const DNS_FORWARD_V6: std::net::Ipv6Addr =
    std::net::Ipv6Addr::new(0xfd53, 0x5ba9, 0xe47, 0, 0, 0, 0, 0x53);

/// Longest wait for pasta to configure the namespace.
const READY_TIMEOUT: Duration = Duration::from_secs(10);

/// How pasta is told to run.
#[derive(Debug, Clone)]
pub(crate) struct PastaArgs {
    pub(crate) program: PathBuf,
    /// Addresses whose UDP port 53 pasta maps to the host's resolver.
    pub(crate) dns_forward: Vec<std::net::IpAddr>,
    /// Forward TCP to the namespace's loopback ports to the host's.
    pub(crate) host_loopback: bool,
}

/// A running pasta.
#[derive(Debug)]
pub(crate) struct Pasta {
    child: Child,
}

impl Pasta {
    /// Starts pasta for the namespaces `user` and `net`, with its ready
    /// FIFO and log in `dir`, and waits until it configured them. For the
    /// spawner thread (the parent-death signal is that thread's).
    pub(crate) fn start(
        args: &PastaArgs,
        user: &OwnedFd,
        net: &OwnedFd,
        dir: &Path,
    ) -> io::Result<Pasta> {
        let ready = dir.join("ready");
        nix::unistd::mkfifo(
            &ready,
            nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
        )
        .map_err(io::Error::from)?;
        let log_path = dir.join("pasta.log");
        let log = File::create(&log_path)?;
        let mut command = Command::new(&args.program);
        command
            .args(arguments(args, &ready))
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        let (user_fd, net_fd) = (user.as_raw_fd(), net.as_raw_fd());
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
                // pasta drops that signal when it changes its credentials:
                // what ties it to the run is staying in the worker's
                // process group and cgroup, which the run's tree kill
                // takes along.
                // dup2 leaves the copies without close-on-exec.
                if libc::dup2(user_fd, 3) != 3 || libc::dup2(net_fd, 4) != 4 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        // Opened before pasta writes it, so its open does not wait for us;
        // non-blocking, so a pasta that never gets there leaves us the
        // exit to wait for.
        let fifo = open_nonblocking(&ready)?;
        let child = command.spawn()?;
        let mut pasta = Pasta { child };
        match wait_ready(&fifo, &mut pasta.child) {
            Ok(()) => Ok(pasta),
            Err(e) => {
                let mut log = String::new();
                let _ = File::open(&log_path).and_then(|mut f| f.read_to_string(&mut log));
                let said = log
                    .lines()
                    .rfind(|l| !l.contains("syslog") && !l.trim().is_empty())
                    .unwrap_or("")
                    .trim()
                    .to_owned();
                Err(io::Error::other(if said.is_empty() {
                    format!("pasta did not set up the tools' private network: {e}")
                } else {
                    format!(
                        "pasta did not set up the tools' private network: {e}: pasta said: {said}"
                    )
                }))
            }
        }
    }

    /// pasta's pid (for tests that check it is gone).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Pasta {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn arguments(args: &PastaArgs, ready: &Path) -> Vec<OsString> {
    let mut out: Vec<OsString> = [
        "--foreground",
        "--quiet",
        "--config-net",
        "--no-map-gw",
        "--no-netns-quit",
        "--tcp-ports",
        "none",
        "--udp-ports",
        "none",
        "--udp-ns",
        "none",
        "--tcp-ns",
        if args.host_loopback { "auto" } else { "none" },
    ]
    .iter()
    .map(OsString::from)
    .collect();
    for address in &args.dns_forward {
        out.push("--dns-forward".into());
        out.push(address.to_string().into());
    }
    if crate::unix::running_as_root() {
        // As root, pasta otherwise becomes `nobody`, who may not enter a
        // user namespace root owns.
        out.push("--runas".into());
        out.push("0:0".into());
    }
    // The holder's persistent tap (see holder.rs), not one named after
    // the host's interface.
    out.push("--ns-ifname".into());
    out.push(super::holder::TAP_NAME.into());
    out.push("--pid".into());
    out.push(ready.into());
    out.push("--userns".into());
    out.push("/proc/self/fd/3".into());
    out.push("--netns".into());
    out.push("/proc/self/fd/4".into());
    out
}

fn open_nonblocking(path: &Path) -> io::Result<OwnedFd> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())?;
    // SAFETY: open with a NUL-terminated path.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new fd of ours.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Waits until pasta wrote its pid to the FIFO (ready) or exited (failed).
fn wait_ready(fifo: &OwnedFd, child: &mut Child) -> io::Result<()> {
    if crate::unix::wait_readable_or_exit(fifo, child, READY_TIMEOUT)? {
        return Ok(());
    }
    // POLLHUP without data: a writer came and went without a pid.
    Err(io::Error::other(
        "it closed its pid file without writing it",
    ))
}
