//! The network holder: a process that owns a user and a network namespace
//! for the life of a run, so every tool call of the run joins the same
//! private network instead of paying for a new one.
//!
//! Forked on the spawner thread (so its parent-death signal fires only
//! when the whole process dies), it unshares `CLONE_NEWUSER |
//! CLONE_NEWNET` (its uid and gid mapped to themselves), brings `lo` up,
//! makes the stack's tap device [`TAP_NAME`] persistent (see below),
//! and sends its two namespace descriptors back over a socket pair; once
//! told (after the stack configured the namespace: the kernel checks a new
//! route's gateway through the rules, and the gateway is often in a
//! refused range), it installs the rules it was handed
//! ([`super::netlink`]) and says so on the same socket. The worker never
//! opens `/proc/<holder>/ns/*`, which the kernel refuses for a
//! non-dumpable process (the holder is a copy of the worker's memory, so
//! it stays non-dumpable). It then waits for that socket to close and
//! exits; [`Holder`]'s drop kills and reaps it all the same.
//!
//! Why the holder makes the tap device: a stack that made its own
//! (non-persistent) tap unregisters it when it exits, and that exit waits
//! for the kernel's RCU grace periods: 20 to 57 ms measured for killing
//! slirp4netns, most of what a run paid for its network. A persistent
//! device the stack attaches to is instead unregistered with the network
//! namespace, by the kernel's asynchronous namespace cleanup, which no
//! process of ours waits for; it holds no reference to the namespace, so
//! it goes with it (nothing of it outlives the run's processes).
//!
//! Everything after the fork is async-signal-safe: raw syscalls on data
//! prepared before it. This module starts no other process.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::netlink::{self, Batch, Request};
use crate::forked::raw::{fork_raw, write_file};
use crate::forked::step::Step;

/// What the holder reports when a step failed: which, and the errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
enum Failed {
    Unshare = 1,
    Maps = 2,
    Rules = 3,
    OpenNamespace = 4,
    Tap = 5,
}

/// The tap device the holder makes and the stack attaches to.
pub(crate) const TAP_NAME: &str = "tap0";

/// A running holder and its namespaces.
#[derive(Debug)]
pub(crate) struct Holder {
    pid: libc::pid_t,
    /// Carries the go for the rules and their report; closing it tells
    /// the holder to exit.
    socket: OwnedFd,
    pub(crate) user_namespace: OwnedFd,
    pub(crate) network_namespace: OwnedFd,
    rule_count: usize,
}

/// Everything the child needs, made before the fork.
struct Prepared {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Sent at once (`lo` up).
    early: Batch,
    /// Sent when told ([`Holder::install_rules`]).
    rules: Batch,
    /// `TUNSETIFF`'s argument for [`TAP_NAME`].
    tap: libc::ifreq,
}

impl Holder {
    /// Starts a holder with `early` applied in its namespace, and `rules`
    /// kept for [`Self::install_rules`]. Blocks until it reported (about a
    /// millisecond); for the spawner thread.
    pub(crate) fn start(early: Vec<Request>, rules: Vec<Request>) -> io::Result<Holder> {
        // SAFETY: geteuid and getegid cannot fail.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let prepared = Prepared {
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            early: Batch::new(&early),
            rules: Batch::new(&rules),
            tap: tap_request(),
        };
        let (ours, theirs) = crate::layer::handoff::pair()?;
        // SAFETY: the child runs only async-signal-safe code
        // (`holder_main`) and never returns.
        let pid = unsafe { fork_raw() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            // SAFETY: in the freshly forked child.
            unsafe { holder_main(&prepared, theirs.as_raw_fd()) }
        }
        drop(theirs);
        let mut holder_guard = Reap(pid);
        let (status, fds) = receive_report(&ours)?;
        if let Some((step, errno)) = status {
            return Err(report_error(step, errno, prepared.early.len()));
        }
        let Some([user, net]) = fds else {
            return Err(io::Error::other(
                "the network holder reported success without its namespaces",
            ));
        };
        holder_guard.0 = 0;
        Ok(Holder {
            pid,
            rule_count: prepared.rules.len(),
            socket: ours,
            user_namespace: user,
            network_namespace: net,
        })
    }

    /// Has the holder install its rules, and waits for its report.
    pub(crate) fn install_rules(&self) -> io::Result<()> {
        let go = [1u8];
        // SAFETY: send from a live buffer on our socket.
        let sent = unsafe {
            libc::send(
                self.socket.as_raw_fd(),
                go.as_ptr().cast(),
                1,
                libc::MSG_NOSIGNAL,
            )
        };
        if sent != 1 {
            return Err(io::Error::last_os_error());
        }
        match receive_report(&self.socket)? {
            (None, _) => Ok(()),
            (Some((step, errno)), _) => Err(report_error(step, errno, self.rule_count)),
        }
    }

    /// The holder's pid (for tests that check it is gone).
    pub(crate) fn pid(&self) -> libc::pid_t {
        self.pid
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        Reap(self.pid).kill_and_reap();
    }
}

/// Kills and reaps a holder that is not handed out (an early return).
struct Reap(libc::pid_t);

impl Reap {
    fn kill_and_reap(&self) {
        if self.0 <= 0 {
            return;
        }
        // SAFETY: our own unreaped child, so the pid is still it.
        unsafe {
            libc::kill(self.0, libc::SIGKILL);
            let mut status = 0;
            while libc::waitpid(self.0, &mut status, 0) < 0
                && *libc::__errno_location() == libc::EINTR
            {}
        }
    }
}

impl Drop for Reap {
    fn drop(&mut self) {
        self.kill_and_reap();
    }
}

/// Space for one SCM_RIGHTS message of two fds (CMSG_SPACE(8) is 24 on
/// every 64-bit Linux; 32 leaves room).
const CONTROL_BYTES: usize = 32;

/// The report: the failed step and errno, if one failed, and the two fds
/// when sent (the first report's, on success).
type Report = (Option<(u32, i32)>, Option<[OwnedFd; 2]>);

fn receive_report(socket: &OwnedFd) -> io::Result<Report> {
    let mut words = [0u32; 3];
    let mut control = [0u64; CONTROL_BYTES / 8];
    let mut iov = libc::iovec {
        iov_base: words.as_mut_ptr().cast(),
        iov_len: std::mem::size_of_val(&words),
    };
    // SAFETY: msghdr is plain data; zeroed is a valid empty one.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = CONTROL_BYTES;
    // SAFETY: every pointer in msg points at live locals.
    let got = unsafe { libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    if usize::try_from(got).ok() != Some(std::mem::size_of_val(&words)) {
        return Err(io::Error::other(
            "the network holder ended before it reported (see the worker's stderr)",
        ));
    }
    let mut fds: Vec<OwnedFd> = Vec::new();
    // SAFETY: CMSG_* walk the control buffer the kernel filled.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
                let count = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / 4;
                for i in 0..count {
                    fds.push(OwnedFd::from_raw_fd(data.add(i).read_unaligned()));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    let status = (words[0] != 0).then(|| (words[0], i32::try_from(words[1]).unwrap_or(0)));
    let failed_index = words[2];
    let status = status.map(|(step, errno)| {
        if step == Failed::Rules as u32 {
            (step | (failed_index << 8), errno)
        } else {
            (step, errno)
        }
    });
    match <[OwnedFd; 2]>::try_from(fds) {
        Ok(fds) => Ok((status, Some(fds))),
        Err(_) => Ok((status, None)),
    }
}

fn report_error(step: u32, errno: i32, requests: usize) -> io::Error {
    let os = io::Error::from_raw_os_error(errno);
    let what = match step & 0xff {
        s if s == Failed::Unshare as u32 => {
            "creating the user and network namespaces of the tools' private network (unshare) \
             was refused; user namespaces may be disabled"
                .to_owned()
        }
        s if s == Failed::Maps as u32 => {
            "writing the uid and gid maps of the private network's user namespace failed".to_owned()
        }
        s if s == Failed::Rules as u32 => format!(
            "the private network's routing request {} of {} was refused; the kernel may lack \
             policy routing (CONFIG_IP_MULTIPLE_TABLES)",
            (step >> 8) + 1,
            requests
        ),
        s if s == Failed::Tap as u32 => {
            let hint = if tun_usable() {
                ""
            } else {
                " (/dev/net/tun is not readable and writable by this user; the network stack \
                 needs it: most systems make it mode 0666)"
            };
            format!("making the private network's tap device failed{hint}")
        }
        _ => "opening the private network's namespaces failed".to_owned(),
    };
    io::Error::new(os.kind(), format!("{what}: {os}"))
}

/// Whether this process may open `/dev/net/tun` for reading and writing.
fn tun_usable() -> bool {
    // SAFETY: access with a NUL-terminated path.
    unsafe { libc::access(c"/dev/net/tun".as_ptr(), libc::R_OK | libc::W_OK) == 0 }
}

/// The holder's life.
///
/// # Safety
/// Only in the freshly forked child; never returns.
unsafe fn holder_main(prepared: &Prepared, socket: RawFd) -> ! {
    // SAFETY: (the whole block) async-signal-safe syscalls on data prepared
    // before the fork.
    unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
        // It stays in the worker's process group (and cgroup): whatever
        // kills the worker's tree kills it too.
        let socket = keep_only(socket);
        let report = |failed: u32, errno: i32, index: u32, fds: Option<[RawFd; 2]>| {
            send_report(socket, [failed, errno as u32, index], fds);
        };
        crate::capabilities::raise_setfcap();
        if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) != 0 {
            report(Failed::Unshare as u32, errno(), 0, None);
            libc::_exit(1);
        }
        let was_dumpable = libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0);
        if was_dumpable == 0 {
            libc::prctl(libc::PR_SET_DUMPABLE, 1 as libc::c_ulong, 0, 0, 0);
        }
        let maps = write_file(Step::Setgroups, c"/proc/self/setgroups", b"deny")
            .and_then(|()| write_file(Step::UidMap, c"/proc/self/uid_map", &prepared.uid_map))
            .and_then(|()| write_file(Step::GidMap, c"/proc/self/gid_map", &prepared.gid_map));
        if was_dumpable == 0 {
            libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong, 0, 0, 0);
        }
        if let Err(e) = maps {
            report(Failed::Maps as u32, e.errno, 0, None);
            libc::_exit(1);
        }
        if let Err((index, e)) = netlink::send_all(&prepared.early) {
            report(Failed::Rules as u32, e, index as u32, None);
            libc::_exit(1);
        }
        if let Err(e) = make_persistent_tap(&prepared.tap) {
            report(Failed::Tap as u32, e, 0, None);
            libc::_exit(1);
        }
        let user = libc::open(
            c"/proc/self/ns/user".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        let net = libc::open(
            c"/proc/self/ns/net".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if user < 0 || net < 0 {
            report(Failed::OpenNamespace as u32, errno(), 0, None);
            libc::_exit(1);
        }
        report(0, 0, 0, Some([user, net]));
        libc::close(user);
        libc::close(net);
        let mut byte = 0u8;
        if wait_byte(socket, &mut byte) {
            match netlink::send_all(&prepared.rules) {
                Ok(()) => report(0, 0, 0, None),
                Err((index, e)) => report(Failed::Rules as u32, e, index as u32, None),
            }
        }
        // Until the worker closes its end (or dies: then the death signal).
        loop {
            let got = libc::read(socket, (&raw mut byte).cast(), 1);
            if got == 0 || (got < 0 && errno() != libc::EINTR) {
                libc::_exit(0);
            }
        }
    }
}

/// `TUNSETIFF`'s argument: a tap named [`TAP_NAME`] without packet
/// information, the flags both stacks ask for when they attach.
fn tap_request() -> libc::ifreq {
    // SAFETY: ifreq is plain data; zeroed is a valid empty one.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(TAP_NAME.bytes()) {
        *slot = byte as libc::c_char;
    }
    request.ifr_ifru.ifru_flags = (libc::IFF_TAP | libc::IFF_NO_PI) as libc::c_short;
    request
}

/// Makes the tap device of `request` in this network namespace and
/// leaves it persistent (see the module doc); `Err(errno)` on failure.
///
/// # Safety
/// Async-signal-safe (open, ioctl, close), for a forked child.
unsafe fn make_persistent_tap(request: &libc::ifreq) -> Result<(), i32> {
    // SAFETY: open with a NUL-terminated path; the ioctls read `request`
    // (TUNSETIFF writes back into a copy) and an int.
    unsafe {
        let tun = libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if tun < 0 {
            return Err(errno());
        }
        let mut request = *request;
        let made = libc::ioctl(tun, libc::TUNSETIFF, &raw mut request) == 0
            && libc::ioctl(tun, libc::TUNSETPERSIST, 1 as libc::c_ulong) == 0;
        let result = if made { Ok(()) } else { Err(errno()) };
        libc::close(tun);
        result
    }
}

/// Reads one byte; false at end of file or on an error.
unsafe fn wait_byte(socket: RawFd, byte: &mut u8) -> bool {
    loop {
        // SAFETY: read into a live byte.
        let got = unsafe { libc::read(socket, (byte as *mut u8).cast(), 1) };
        if got == 1 {
            return true;
        }
        if got == 0 || errno() != libc::EINTR {
            return false;
        }
    }
}

/// Moves `socket` to fd 3, points 0 to 2 at `/dev/null` and closes every
/// other inherited fd: the holder must keep none of the worker's files,
/// pipes or sockets open.
unsafe fn keep_only(socket: RawFd) -> RawFd {
    // SAFETY: dup2, open and close_range on fds of this process.
    unsafe {
        const KEPT: RawFd = 3;
        if socket != KEPT {
            libc::dup2(socket, KEPT);
        }
        libc::syscall(
            libc::SYS_close_range,
            (KEPT + 1) as libc::c_uint,
            libc::c_uint::MAX,
            0 as libc::c_uint,
        );
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            if null > 2 && null != KEPT {
                libc::close(null);
            }
        }
        KEPT
    }
}

/// Sends the report words, with the two fds when given.
unsafe fn send_report(socket: RawFd, mut words: [u32; 3], fds: Option<[RawFd; 2]>) {
    // SAFETY: msghdr and the control buffer live on this stack; CMSG_*
    // are pointer arithmetic on it.
    unsafe {
        let mut control = [0u64; CONTROL_BYTES / 8];
        let mut iov = libc::iovec {
            iov_base: words.as_mut_ptr().cast(),
            iov_len: std::mem::size_of_val(&words),
        };
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if let Some(fds) = fds {
            let space = libc::CMSG_SPACE(8) as usize;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = space;
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(8) as usize;
            let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
            data.write_unaligned(fds[0]);
            data.add(1).write_unaligned(fds[1]);
        }
        libc::sendmsg(socket, &msg, libc::MSG_NOSIGNAL);
    }
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}
