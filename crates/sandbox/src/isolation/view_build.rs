//! Building the filesystem view in the child, from a [`ViewPlan`] made
//! before the fork: bubblewrap's sequence, in raw syscalls.
//!
//! 1. A small staging tmpfs on `/tmp` (of the new mount namespace) holds `newroot` (the future root,
//!    a tmpfs of its own) and `oldroot`; `pivot_root` makes the staging
//!    tmpfs the root and puts the host's root on `/oldroot`, so every source
//!    is read under `/oldroot` and no bind target can hide a source. The
//!    working directory stays where the child was put (a pinned workspace
//!    is entered by its descriptor): a bind from `.` takes it from there.
//! 2. The plan's steps fill `/newroot`. In a user namespace a bind keeps
//!    its source mount's flags and the kernel locks them: making it
//!    read-only takes a second `MS_REMOUNT|MS_BIND` mount, which must
//!    repeat every locked flag of the source (read from `statfs`) or the
//!    kernel answers EPERM.
//! 3. `/oldroot` is detached, `pivot_root(".", ".")` in `/newroot` makes it
//!    the root and the staging root is detached in turn; the new root is
//!    remounted read-only and the process goes back to its working
//!    directory, now inside the view.
//!
//! Runs between fork and exec: no allocation, no locks; every path is a
//! `CString` of the plan.

use std::ffi::CStr;
use std::ptr;

use super::view::{BindMode, Op, ViewPlan};
use crate::forked::step::{Step, StepError, check, check_or_exists, last};

/// The staging tmpfs and the new root's tmpfs hold only directories, empty
/// files and symlinks: a small cap is plenty.
const SMALL_TMPFS: &CStr = c"size=1m,mode=0755";

/// `statfs` flags (`ST_*`) of a mount, and the `MS_*` flag each becomes.
const MOUNT_FLAGS: [(u64, libc::c_ulong); 7] = [
    (1, libc::MS_RDONLY),
    (2, libc::MS_NOSUID),
    (4, libc::MS_NODEV),
    (8, libc::MS_NOEXEC),
    (1024, libc::MS_NOATIME),
    (2048, libc::MS_NODIRATIME),
    (4096, libc::MS_RELATIME),
];
const ST_NOATIME: u64 = 1024;
const ST_RELATIME: u64 = 4096;

/// Index of `f_flags` in the kernel's `struct statfs` on 64-bit Linux
/// (x86_64, aarch64, riscv64 share the generic layout: eleven 8-byte
/// words, the fsid counting as one, before it).
const STATFS_FLAGS_WORD: usize = 10;

impl ViewPlan {
    /// Builds the view and enters it. Called in pid 1 of the new namespaces,
    /// after the mounts were made private.
    ///
    /// # Safety
    /// Only in the forked child; async-signal-safe.
    pub(crate) unsafe fn build(&self) -> Result<(), StepError> {
        // SAFETY: (the whole block) mount, umount2, mkdir, open, close, symlink,
        // chdir and the pivot_root and statfs syscalls are async-signal-safe;
        // every pointer is a NUL-terminated string of the plan or a constant.
        unsafe {
            mount_tmpfs(Step::ViewStaging, c"/tmp", SMALL_TMPFS)?;
            make_dir(c"/tmp/newroot", 0o755)?;
            make_dir(c"/tmp/oldroot", 0o755)?;
            mount_tmpfs(Step::ViewStaging, c"/tmp/newroot", SMALL_TMPFS)?;
            pivot_root(c"/tmp", c"/tmp/oldroot")?;
            // No chdir here: every path of the ops is absolute, and a bind
            // from `.` (the pinned workspace) needs the working directory
            // the child entered by descriptor.
            for op in &self.ops {
                apply(op)?;
            }
            check(
                Step::ViewDetach,
                libc::umount2(c"/oldroot".as_ptr(), libc::MNT_DETACH),
            )?;
            check(Step::ViewChdir, libc::chdir(c"/newroot".as_ptr()))?;
            pivot_root(c".", c".")?;
            check(
                Step::ViewDetach,
                libc::umount2(c".".as_ptr(), libc::MNT_DETACH),
            )?;
            check(Step::ViewChdir, libc::chdir(c"/".as_ptr()))?;
            check(
                Step::ViewRemount,
                libc::mount(
                    ptr::null(),
                    c"/".as_ptr(),
                    ptr::null(),
                    libc::MS_REMOUNT
                        | libc::MS_BIND
                        | libc::MS_RDONLY
                        | libc::MS_NOSUID
                        | libc::MS_NODEV,
                    ptr::null(),
                ),
            )?;
            check(Step::ViewChdir, libc::chdir(self.cwd.as_ptr()))?;
        }
        Ok(())
    }
}

/// # Safety
/// As [`ViewPlan::build`].
unsafe fn apply(op: &Op) -> Result<(), StepError> {
    // SAFETY: as in `build`.
    unsafe {
        match op {
            Op::Dir { path, mode } => make_dir(path, *mode),
            Op::File { path } => {
                let fd = libc::open(
                    path.as_ptr(),
                    libc::O_RDONLY | libc::O_CREAT | libc::O_CLOEXEC | libc::O_NOFOLLOW,
                    0o644 as libc::c_uint,
                );
                if fd < 0 {
                    return Err(last(Step::ViewFile));
                }
                libc::close(fd);
                Ok(())
            }
            Op::Symlink { target, link } => check_or_exists(
                Step::ViewSymlink,
                libc::symlink(target.as_ptr(), link.as_ptr()),
            ),
            Op::Bind {
                source,
                target,
                mode,
            } => bind(source, target, *mode),
            Op::Tmpfs { target, options } => mount_tmpfs(Step::ViewTmpfs, target, options),
            Op::Placeholder { path } => placeholder(path),
            Op::Proc { target } => check(
                Step::ViewProc,
                libc::mount(
                    c"proc".as_ptr(),
                    target.as_ptr(),
                    c"proc".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    ptr::null(),
                ),
            ),
        }
    }
}

/// Binds `source` on `target`, then remounts it `nosuid` and read-only
/// (but for [`BindMode::ReadWrite`]), `nodev` (but for a device).
///
/// # Safety
/// As [`ViewPlan::build`].
unsafe fn bind(source: &CStr, target: &CStr, mode: BindMode) -> Result<(), StepError> {
    // SAFETY: as in `build`.
    unsafe {
        check(
            Step::ViewBind,
            libc::mount(
                source.as_ptr(),
                target.as_ptr(),
                ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                ptr::null(),
            ),
        )?;
        let extra = match mode {
            BindMode::Device => libc::MS_RDONLY | libc::MS_NOSUID,
            BindMode::ReadOnly => libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
            BindMode::ReadWrite => libc::MS_NOSUID | libc::MS_NODEV,
        };
        let locked = locked_flags(target)?;
        check(
            Step::ViewRemount,
            libc::mount(
                ptr::null(),
                target.as_ptr(),
                ptr::null(),
                libc::MS_REMOUNT | libc::MS_BIND | locked | extra,
                ptr::null(),
            ),
        )
    }
}

/// The flags of the mount at `path` that a bind remount must repeat: the
/// kernel locks them on mounts a user namespace inherited.
///
/// # Safety
/// As [`ViewPlan::build`].
unsafe fn locked_flags(path: &CStr) -> Result<libc::c_ulong, StepError> {
    let mut words = [0u64; 16];
    // SAFETY: statfs writes at most 120 bytes into the 128-byte buffer.
    let rc = unsafe { libc::syscall(libc::SYS_statfs, path.as_ptr(), words.as_mut_ptr()) };
    if rc != 0 {
        return Err(last(Step::ViewRemount));
    }
    let st = words[STATFS_FLAGS_WORD];
    let mut flags = 0;
    for (st_flag, ms_flag) in MOUNT_FLAGS {
        if st & st_flag != 0 {
            flags |= ms_flag;
        }
    }
    // No atime flag means strictatime, which must be said: a remount
    // without one asks for relatime.
    if st & (ST_NOATIME | ST_RELATIME) == 0 {
        flags |= libc::MS_STRICTATIME;
    }
    Ok(flags)
}

/// # Safety
/// As [`ViewPlan::build`].
unsafe fn mount_tmpfs(step: Step, target: &CStr, options: &CStr) -> Result<(), StepError> {
    // SAFETY: as in `build`.
    check(step, unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            options.as_ptr().cast(),
        )
    })
}

/// What a placeholder holds: nothing, and nothing can be added.
const PLACEHOLDER_TMPFS: &CStr = c"size=4k,mode=0555";

/// A directory at `path` (made when missing) with an empty read-only tmpfs
/// on it. A directory that cannot be made (the writable root is not
/// writable to this process, so the tool cannot make one either) is left
/// out.
///
/// # Safety
/// As [`ViewPlan::build`].
unsafe fn placeholder(path: &CStr) -> Result<(), StepError> {
    // SAFETY: as in `build`.
    unsafe {
        match check(Step::ViewDir, libc::mkdir(path.as_ptr(), 0o755)) {
            Ok(()) => {}
            Err(e) if e.errno == libc::EEXIST => {}
            Err(_) => return Ok(()),
        }
        check(
            Step::ViewTmpfs,
            libc::mount(
                c"tmpfs".as_ptr(),
                path.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                PLACEHOLDER_TMPFS.as_ptr().cast(),
            ),
        )
    }
}

/// mkdir; an existing directory is fine.
///
/// # Safety
/// As [`ViewPlan::build`].
unsafe fn make_dir(path: &CStr, mode: u32) -> Result<(), StepError> {
    // SAFETY: as in `build`.
    check_or_exists(Step::ViewDir, unsafe { libc::mkdir(path.as_ptr(), mode) })
}

/// # Safety
/// As [`ViewPlan::build`].
unsafe fn pivot_root(new_root: &CStr, put_old: &CStr) -> Result<(), StepError> {
    // SAFETY: as in `build`.
    let rc = unsafe { libc::syscall(libc::SYS_pivot_root, new_root.as_ptr(), put_old.as_ptr()) };
    if rc != 0 {
        return Err(last(Step::ViewPivot));
    }
    Ok(())
}
