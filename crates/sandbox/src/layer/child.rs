//! Entering a workspace layer in the forked child, between `fork` and
//! `exec`: raw system calls on data prepared before the fork
//! ([`LayerSetup::new`]), no allocation.
//!
//! A new layer over the workspace (the child is already in it, entered
//! by descriptor):
//! 1. `unshare(CLONE_NEWUSER | CLONE_NEWNS)`, the uid and gid mapped to
//!    themselves, every mount made private (nothing propagates back);
//! 2. a tmpfs made with the new mount API (`fsopen`, `fsconfig` with
//!    `size=` and `nr_inodes=`, `fsmount`), `upper/` (with the workspace
//!    root's mode and owner: it becomes the merged root) and `work/` in
//!    it, mounted over the workspace directory: overlayfs before Linux
//!    6.15 takes layers only from mounts of the caller's namespace;
//! 3. an overlay (`lowerdir` the workspace, reached through the descriptor
//!    taken before step 2, so the tmpfs on top of it does not hide it;
//!    `upperdir`, `workdir` in the tmpfs; `userxattr`, as a user namespace
//!    needs), `nosuid,nodev`, mounted over the tmpfs; the child enters its
//!    root;
//! 4. the tmpfs root, the overlay root and the two namespaces go back to
//!    the parent ([`super::handoff`]).
//!
//! Stacked on an enclosing run's view, step 1 joins that run's user and
//! mount namespaces (a process of the same user in the parent namespace
//! holds every capability in them), takes a copy of the mount namespace
//! and enters the workspace by its path, which must lead to the enclosing
//! merged root; entering without a layer stops there.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::ptr;

use super::handoff;
use super::spec::{LayerJoin, WorkspaceLayer};
use super::step::LayerStep;

const FSOPEN_CLOEXEC: libc::c_uint = 1;
const FSMOUNT_CLOEXEC: libc::c_uint = 1;
const FSCONFIG_SET_FLAG: libc::c_uint = 0;
const FSCONFIG_SET_STRING: libc::c_uint = 1;
const FSCONFIG_CMD_CREATE: libc::c_uint = 6;
const MOUNT_ATTR_NOSUID: libc::c_uint = 0x2;
const MOUNT_ATTR_NODEV: libc::c_uint = 0x4;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;

/// What the child does, prepared before the fork.
#[derive(Debug)]
pub(crate) struct LayerSetup {
    layer: Planned,
    /// The working directory's path: entered again inside an enclosing
    /// run's namespaces.
    cwd: CString,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// The child's end of the handoff.
    report: OwnedFd,
}

#[derive(Debug)]
enum Planned {
    New {
        size: CString,
        inodes: CString,
        within: Option<LayerJoin>,
    },
    Enter(LayerJoin),
}

/// Failed step and errno.
type Failure = (LayerStep, i32);

impl LayerSetup {
    /// The child's steps for `layer`, in the working directory `cwd`;
    /// `report` is the child's end of [`handoff::pair`].
    pub(crate) fn new(
        layer: WorkspaceLayer,
        cwd: &std::path::Path,
        report: OwnedFd,
    ) -> io::Result<Self> {
        use std::os::unix::ffi::OsStrExt;
        let cwd = CString::new(cwd.as_os_str().as_bytes())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let number = |n: u64| CString::new(n.to_string()).map_err(io::Error::other);
        let layer = match layer {
            WorkspaceLayer::New {
                bytes,
                inodes,
                within,
            } => Planned::New {
                size: number(bytes.max(1))?,
                inodes: number(inodes.max(1))?,
                within,
            },
            WorkspaceLayer::Enter(join) => Planned::Enter(join),
        };
        // SAFETY: geteuid and getegid cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        Ok(Self {
            layer,
            cwd,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            report,
        })
    }

    /// Whether the parent gets descriptors back.
    pub(crate) fn hands_back(&self) -> bool {
        matches!(self.layer, Planned::New { .. })
    }

    /// Enters the layer and reports to the parent.
    ///
    /// # Safety
    /// Only in a freshly forked, single-threaded child whose working
    /// directory is the workspace; async-signal-safe.
    pub(crate) unsafe fn apply_in_child(&self) -> io::Result<()> {
        // SAFETY: as the caller promises.
        match unsafe { self.enter() } {
            Ok(fds) => {
                // SAFETY: the descriptors were opened by `enter` and are
                // open; the handoff only reads them.
                unsafe {
                    handoff::send(self.report.as_raw_fd(), Ok(&fds[..self.fd_count()]));
                    for fd in fds.iter().take(self.fd_count()) {
                        libc::close(*fd);
                    }
                }
                Ok(())
            }
            Err((step, errno)) => {
                // SAFETY: as above.
                unsafe { handoff::send(self.report.as_raw_fd(), Err((step, errno))) };
                Err(io::Error::from_raw_os_error(errno))
            }
        }
    }

    fn fd_count(&self) -> usize {
        if self.hands_back() {
            handoff::MAX_FDS
        } else {
            0
        }
    }

    /// # Safety
    /// As [`Self::apply_in_child`].
    unsafe fn enter(&self) -> Result<[RawFd; handoff::MAX_FDS], Failure> {
        // SAFETY: (the whole block) every call is a raw, async-signal-safe
        // syscall on NUL-terminated strings of the plan, stack buffers or
        // descriptors this process holds.
        unsafe {
            let join = match &self.layer {
                Planned::New { within, .. } => within.as_ref(),
                Planned::Enter(join) => Some(join),
            };
            match join {
                Some(join) => self.join(join)?,
                None => self.own_namespaces()?,
            }
            let Planned::New { size, inodes, .. } = &self.layer else {
                return Ok([-1; handoff::MAX_FDS]);
            };
            let lower = open_path(c".", LayerStep::Enter)?;
            let mut root: libc::stat = std::mem::zeroed();
            if libc::fstat(lower, &mut root) != 0 {
                return Err(last(LayerStep::Enter));
            }
            let tmpfs = fs_open(c"tmpfs", LayerStep::Tmpfs)?;
            fs_string(tmpfs, c"size", size, LayerStep::Tmpfs)?;
            fs_string(tmpfs, c"nr_inodes", inodes, LayerStep::Tmpfs)?;
            fs_string(tmpfs, c"mode", c"0700", LayerStep::Tmpfs)?;
            let layer_root = fs_mount(tmpfs, LayerStep::Tmpfs)?;
            make_dir(layer_root, c"upper", 0o700)?;
            make_dir(layer_root, c"work", 0o700)?;
            // The merged root is the upper directory: it takes the
            // workspace root's mode and owner (the owner where allowed).
            if libc::fchmodat(layer_root, c"upper".as_ptr(), root.st_mode & 0o7777, 0) != 0 {
                return Err(last(LayerStep::LayerDirs));
            }
            libc::fchownat(
                layer_root,
                c"upper".as_ptr(),
                root.st_uid,
                root.st_gid,
                libc::AT_SYMLINK_NOFOLLOW,
            );
            move_mount(layer_root, lower)?;
            let mut lower_dir = FdPath::new(lower, None);
            let mut upper_dir = FdPath::new(layer_root, Some(b"/upper"));
            let mut work_dir = FdPath::new(layer_root, Some(b"/work"));
            let overlay = fs_open(c"overlay", LayerStep::Overlay)?;
            fs_string(
                overlay,
                c"lowerdir",
                lower_dir.as_cstr(),
                LayerStep::Overlay,
            )?;
            fs_string(
                overlay,
                c"upperdir",
                upper_dir.as_cstr(),
                LayerStep::Overlay,
            )?;
            fs_string(overlay, c"workdir", work_dir.as_cstr(), LayerStep::Overlay)?;
            if libc::syscall(
                libc::SYS_fsconfig,
                overlay,
                FSCONFIG_SET_FLAG,
                c"userxattr".as_ptr(),
                ptr::null::<libc::c_char>(),
                0,
            ) != 0
            {
                return Err(last(LayerStep::Overlay));
            }
            let merged = fs_mount(overlay, LayerStep::Overlay)?;
            move_mount(merged, layer_root)?;
            if libc::fchdir(merged) != 0 {
                return Err(last(LayerStep::Enter));
            }
            libc::close(lower);
            let user_ns = open_ns(c"/proc/self/ns/user")?;
            let mount_ns = open_ns(c"/proc/self/ns/mnt")?;
            Ok([layer_root, merged, user_ns, mount_ns])
        }
    }

    /// A user and mount namespace of the child's own, ids mapped to
    /// themselves, mounts private.
    ///
    /// # Safety
    /// As [`Self::apply_in_child`].
    unsafe fn own_namespaces(&self) -> Result<(), Failure> {
        // SAFETY: (the whole block) as in `enter`.
        unsafe {
            if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) != 0 {
                return Err(last(LayerStep::Unshare));
            }
            // A non-dumpable process's /proc/self files belong to root,
            // which an unprivileged user cannot write its maps through.
            let was_dumpable = libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0);
            if was_dumpable == 0 {
                libc::prctl(libc::PR_SET_DUMPABLE, 1 as libc::c_ulong, 0, 0, 0);
            }
            let maps = write_file(c"/proc/self/setgroups", b"deny")
                .and_then(|()| write_file(c"/proc/self/uid_map", &self.uid_map))
                .and_then(|()| write_file(c"/proc/self/gid_map", &self.gid_map));
            if was_dumpable == 0 {
                libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong, 0, 0, 0);
            }
            maps?;
            if libc::mount(
                ptr::null(),
                c"/".as_ptr(),
                ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                ptr::null(),
            ) != 0
            {
                return Err(last(LayerStep::MountPrivate));
            }
        }
        Ok(())
    }

    /// The enclosing run's namespaces, a copy of its mount namespace, and
    /// its merged root entered by the workspace's path.
    ///
    /// # Safety
    /// As [`Self::apply_in_child`].
    unsafe fn join(&self, join: &LayerJoin) -> Result<(), Failure> {
        // SAFETY: (the whole block) as in `enter`; `stat` buffers live on
        // this stack.
        unsafe {
            if libc::setns(join.user_ns.as_raw_fd(), libc::CLONE_NEWUSER) != 0 {
                return Err(last(LayerStep::JoinUser));
            }
            if libc::setns(join.mount_ns.as_raw_fd(), libc::CLONE_NEWNS) != 0 {
                return Err(last(LayerStep::JoinMount));
            }
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                return Err(last(LayerStep::Unshare));
            }
            if libc::chdir(self.cwd.as_ptr()) != 0 {
                return Err(last(LayerStep::JoinMoved));
            }
            let mut here: libc::stat = std::mem::zeroed();
            let mut merged: libc::stat = std::mem::zeroed();
            if libc::stat(c".".as_ptr(), &mut here) != 0
                || libc::fstat(join.merged.as_raw_fd(), &mut merged) != 0
            {
                return Err(last(LayerStep::JoinMoved));
            }
            if here.st_dev != merged.st_dev || here.st_ino != merged.st_ino {
                return Err((LayerStep::JoinMoved, libc::ESTALE));
            }
        }
        Ok(())
    }
}

/// `/proc/self/fd/N` with an optional suffix, made on the stack.
struct FdPath {
    bytes: [u8; 48],
}

impl FdPath {
    fn new(fd: RawFd, suffix: Option<&[u8]>) -> Self {
        let mut bytes = [0u8; 48];
        let prefix = b"/proc/self/fd/";
        bytes[..prefix.len()].copy_from_slice(prefix);
        let mut at = prefix.len();
        let mut digits = [0u8; 10];
        let mut n = u32::try_from(fd).unwrap_or(0);
        let mut count = 0;
        loop {
            digits[count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        for digit in digits[..count].iter().rev() {
            bytes[at] = *digit;
            at += 1;
        }
        if let Some(suffix) = suffix {
            bytes[at..at + suffix.len()].copy_from_slice(suffix);
        }
        Self { bytes }
    }

    fn as_cstr(&mut self) -> &CStr {
        // The buffer is zeroed past what `new` wrote: a NUL is always there.
        CStr::from_bytes_until_nul(&self.bytes).unwrap_or(c"")
    }
}

fn last(step: LayerStep) -> Failure {
    (
        step,
        io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO),
    )
}

/// # Safety
/// Async-signal-safe; for the forked child.
unsafe fn open_path(path: &CStr, step: LayerStep) -> Result<RawFd, Failure> {
    // SAFETY: open with a NUL-terminated path.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 { Err(last(step)) } else { Ok(fd) }
}

/// # Safety
/// Async-signal-safe; for the forked child.
unsafe fn open_ns(path: &CStr) -> Result<RawFd, Failure> {
    // SAFETY: open with a NUL-terminated path.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        Err(last(LayerStep::Handoff))
    } else {
        Ok(fd)
    }
}

/// # Safety
/// Async-signal-safe; for the forked child.
unsafe fn fs_open(name: &CStr, step: LayerStep) -> Result<RawFd, Failure> {
    // SAFETY: fsopen with a NUL-terminated name.
    let fd = unsafe { libc::syscall(libc::SYS_fsopen, name.as_ptr(), FSOPEN_CLOEXEC) };
    RawFd::try_from(fd)
        .ok()
        .filter(|fd| *fd >= 0)
        .ok_or_else(|| last(step))
}

/// # Safety
/// Async-signal-safe; for the forked child.
unsafe fn fs_string(fs: RawFd, key: &CStr, value: &CStr, step: LayerStep) -> Result<(), Failure> {
    // SAFETY: fsconfig with NUL-terminated key and value.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_fsconfig,
            fs,
            FSCONFIG_SET_STRING,
            key.as_ptr(),
            value.as_ptr(),
            0,
        )
    };
    if rc == 0 { Ok(()) } else { Err(last(step)) }
}

/// Creates the filesystem configured on `fs` and returns its detached
/// mount's root (`nosuid,nodev`); closes `fs`.
///
/// # Safety
/// Async-signal-safe; for the forked child.
unsafe fn fs_mount(fs: RawFd, step: LayerStep) -> Result<RawFd, Failure> {
    // SAFETY: (the whole block) fsconfig, fsmount and close on our descriptor.
    unsafe {
        let created = libc::syscall(
            libc::SYS_fsconfig,
            fs,
            FSCONFIG_CMD_CREATE,
            ptr::null::<libc::c_char>(),
            ptr::null::<libc::c_char>(),
            0,
        );
        if created != 0 {
            let failure = last(step);
            libc::close(fs);
            return Err(failure);
        }
        let mount = libc::syscall(
            libc::SYS_fsmount,
            fs,
            FSMOUNT_CLOEXEC,
            MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        );
        let failure = last(step);
        libc::close(fs);
        RawFd::try_from(mount)
            .ok()
            .filter(|fd| *fd >= 0)
            .ok_or(failure)
    }
}

/// Mounts the detached mount `mount` on the directory `target` (both by
/// descriptor).
///
/// # Safety
/// Async-signal-safe; for the forked child.
unsafe fn move_mount(mount: RawFd, target: RawFd) -> Result<(), Failure> {
    // SAFETY: move_mount with empty paths on our descriptors.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            mount,
            c"".as_ptr(),
            target,
            c"".as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(last(LayerStep::Attach))
    }
}

/// # Safety
/// Async-signal-safe; for the forked child.
unsafe fn make_dir(at: RawFd, name: &CStr, mode: libc::mode_t) -> Result<(), Failure> {
    // SAFETY: mkdirat with a NUL-terminated name.
    if unsafe { libc::mkdirat(at, name.as_ptr(), mode) } == 0 {
        Ok(())
    } else {
        Err(last(LayerStep::LayerDirs))
    }
}

/// Writes `data` to `path` with one write(2).
///
/// # Safety
/// Async-signal-safe; for the forked child.
unsafe fn write_file(path: &CStr, data: &[u8]) -> Result<(), Failure> {
    // SAFETY: open with a NUL-terminated path; write from a live slice.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(last(LayerStep::IdMap));
        }
        let written = libc::write(fd, data.as_ptr().cast(), data.len());
        let failure = last(LayerStep::IdMap);
        libc::close(fd);
        if usize::try_from(written).ok() != Some(data.len()) {
            return Err(failure);
        }
    }
    Ok(())
}
