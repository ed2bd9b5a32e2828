//! Passing the layer's descriptors (or the step that failed) from the
//! forked child back to the parent: one datagram on a `SOCK_SEQPACKET`
//! pair made before the fork, `SCM_RIGHTS` for the descriptors.
//!
//! The child's side ([`send`]) is async-signal-safe: it builds the message
//! on its stack. The parent reads it ([`receive`]) once the spawn returned,
//! without blocking: the child sent it before it exec'd or failed.

use std::io;
use std::mem;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::step::LayerStep;

/// Descriptors one message carries at most.
pub(crate) const MAX_FDS: usize = 4;

/// Bytes of a message's data: the step (0 for success) and an errno.
const DATA_BYTES: usize = 5;

/// Control buffer of a message, in u64 words for the alignment `cmsghdr`
/// needs: room for `CMSG_SPACE(MAX_FDS * 4)` (32 bytes on 64-bit Linux).
const CONTROL_WORDS: usize = 8;

/// The two ends: the parent keeps the first, the child gets the second.
pub(crate) fn pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: socketpair writes two descriptors into `fds`.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just made and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Sends `fds` (success) or the failed step with its errno. Errors are
/// ignored: the parent then finds no message and says so.
///
/// # Safety
/// Async-signal-safe; for the forked child. Every fd must be open.
pub(crate) unsafe fn send(socket: RawFd, outcome: Result<&[RawFd], (LayerStep, i32)>) {
    let mut data = [0u8; DATA_BYTES];
    let fds: &[RawFd] = match outcome {
        Ok(fds) => fds,
        Err((step, errno)) => {
            data[0] = step as u8;
            data[1..].copy_from_slice(&errno.to_le_bytes());
            &[]
        }
    };
    let count = fds.len().min(MAX_FDS);
    let mut control = [0u64; CONTROL_WORDS];
    // SAFETY: (the whole block) msghdr and iovec are plain data pointing into
    // this stack frame; the CMSG_* macros only compute offsets inside
    // `control`, which holds CMSG_SPACE(MAX_FDS * 4); sendmsg is
    // async-signal-safe.
    unsafe {
        let mut iov = libc::iovec {
            iov_base: data.as_mut_ptr().cast(),
            iov_len: DATA_BYTES,
        };
        let mut msg: libc::msghdr = mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if count > 0 {
            let fd_bytes = (count * mem::size_of::<RawFd>()) as libc::c_uint;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(fd_bytes) as _;
            let header = libc::CMSG_FIRSTHDR(&msg);
            (*header).cmsg_level = libc::SOL_SOCKET;
            (*header).cmsg_type = libc::SCM_RIGHTS;
            (*header).cmsg_len = libc::CMSG_LEN(fd_bytes) as _;
            let slots = libc::CMSG_DATA(header).cast::<RawFd>();
            for (i, fd) in fds.iter().take(count).enumerate() {
                slots.add(i).write_unaligned(*fd);
            }
        }
        libc::sendmsg(socket, &msg, libc::MSG_NOSIGNAL);
    }
}

/// What the child sent.
#[derive(Debug)]
pub(crate) enum Received {
    /// The layer was entered; its descriptors, in the order sent.
    Entered(Vec<OwnedFd>),
    /// A step failed with an errno.
    Failed { step: LayerStep, errno: i32 },
    /// Nothing (the child failed before the layer step, or never ran it).
    Nothing,
}

/// Reads the child's message from the parent's end, without blocking.
pub(crate) fn receive(socket: &OwnedFd) -> Received {
    let mut data = [0u8; DATA_BYTES];
    let mut control = [0u64; CONTROL_WORDS];
    // SAFETY: (the whole block) recvmsg writes into `data` and `control`, both
    // live for the call and described by their lengths; the CMSG_* walk
    // stays inside the `msg_controllen` the kernel set; each descriptor
    // read out of it was installed in this process by the kernel
    // (MSG_CMSG_CLOEXEC) and is owned by nobody else.
    unsafe {
        let mut iov = libc::iovec {
            iov_base: data.as_mut_ptr().cast(),
            iov_len: DATA_BYTES,
        };
        let mut msg: libc::msghdr = mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = mem::size_of_val(&control) as _;
        let read = libc::recvmsg(
            socket.as_raw_fd(),
            &mut msg,
            libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC,
        );
        if usize::try_from(read).ok() != Some(DATA_BYTES) {
            return Received::Nothing;
        }
        let mut fds = Vec::new();
        let mut header = libc::CMSG_FIRSTHDR(&msg);
        while !header.is_null() {
            if (*header).cmsg_level == libc::SOL_SOCKET && (*header).cmsg_type == libc::SCM_RIGHTS {
                let payload = (*header).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                let slots = libc::CMSG_DATA(header).cast::<RawFd>();
                for i in 0..payload / mem::size_of::<RawFd>() {
                    fds.push(OwnedFd::from_raw_fd(slots.add(i).read_unaligned()));
                }
            }
            header = libc::CMSG_NXTHDR(&msg, header);
        }
        if data[0] == 0 {
            return Received::Entered(fds);
        }
        let errno = i32::from_le_bytes([data[1], data[2], data[3], data[4]]);
        match LayerStep::from_code(data[0]) {
            Some(step) => Received::Failed { step, errno },
            None => Received::Nothing,
        }
    }
}
