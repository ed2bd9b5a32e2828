//! Landlock: which paths a tool process may read, write or execute, and
//! (network off) whether it may bind or connect TCP ports, and (ABI 6) send
//! signals or reach abstract unix sockets outside its own domain.
//!
//! The ruleset is built in the child, after the fresh `/proc` is mounted:
//! Landlock rules bind to inodes, so a rule made before the mount would
//! name the host's `/proc`, not the new one. That rules out the `landlock`
//! crate's allocating builder (between fork and exec nothing may allocate)
//! and is why the three syscalls are called directly here; which rights
//! exist is decided before the fork from the ABI version the kernel reports.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// Filesystem rights (`LANDLOCK_ACCESS_FS_*`), by the ABI that added them.
mod fs {
    pub(super) const EXECUTE: u64 = 1 << 0;
    pub(super) const WRITE_FILE: u64 = 1 << 1;
    pub(super) const READ_FILE: u64 = 1 << 2;
    pub(super) const READ_DIR: u64 = 1 << 3;
    /// ABI 1 handles bits 0..=12 (execute .. make_sym).
    pub(super) const ABI1_ALL: u64 = (1 << 13) - 1;
    /// ABI 2: REFER (bit 13).
    pub(super) const ABI2_ALL: u64 = (1 << 14) - 1;
    /// ABI 3: TRUNCATE (bit 14).
    pub(super) const ABI3_ALL: u64 = (1 << 15) - 1;
    /// ABI 5: IOCTL_DEV (bit 15).
    pub(super) const ABI5_ALL: u64 = (1 << 16) - 1;
    pub(super) const TRUNCATE: u64 = 1 << 14;
    pub(super) const IOCTL_DEV: u64 = 1 << 15;
    /// The rights that make sense on a file (the rest are directory rights;
    /// the kernel refuses them in a rule on a file).
    pub(super) const FILE_RIGHTS: u64 = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV;
    pub(super) const READ_ONLY: u64 = EXECUTE | READ_FILE | READ_DIR;
}

/// ABI 4: TCP bind and connect (`LANDLOCK_ACCESS_NET_*`).
const NET_BIND_AND_CONNECT_TCP: u64 = 0b11;
/// ABI 6: signals and abstract unix sockets stay inside the domain
/// (`LANDLOCK_SCOPE_*`).
const SCOPE_SIGNAL_AND_ABSTRACT_UNIX: u64 = 0b11;

const RULE_PATH_BENEATH: libc::c_int = 1;

/// `struct landlock_ruleset_attr`; the size passed to the kernel says how
/// many of its fields the ABI knows.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

/// `struct landlock_path_beneath_attr` (packed in the kernel's header).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Which Landlock protections a plan applies, for the sandbox status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Coverage {
    pub(crate) network: bool,
    pub(crate) scope: bool,
}

/// A ruleset to build and enforce in the child.
#[derive(Debug, Clone)]
pub(crate) struct LandlockPlan {
    attr: RulesetAttr,
    attr_size: usize,
    rules: Vec<(CString, u64)>,
}

impl LandlockPlan {
    /// Everything outside `read_only` and `read_write` denied, for `abi`.
    /// Paths that do not exist are left out (nothing to allow there).
    /// With `deny_tcp` (network off) and ABI >= 4, TCP bind and connect
    /// are denied too.
    pub(crate) fn new(
        abi: i32,
        read_only: &[PathBuf],
        read_write: &[PathBuf],
        deny_tcp: bool,
    ) -> Result<(Self, Coverage), io::Error> {
        let handled_fs = match abi {
            i32::MIN..=0 => return Err(io::Error::from(io::ErrorKind::Unsupported)),
            1 => fs::ABI1_ALL,
            2 => fs::ABI2_ALL,
            3 | 4 => fs::ABI3_ALL,
            _ => fs::ABI5_ALL,
        };
        let network = deny_tcp && abi >= 4;
        let scope = abi >= 6;
        let attr = RulesetAttr {
            handled_access_fs: handled_fs,
            handled_access_net: if network { NET_BIND_AND_CONNECT_TCP } else { 0 },
            scoped: if scope {
                SCOPE_SIGNAL_AND_ABSTRACT_UNIX
            } else {
                0
            },
        };
        let attr_size = match abi {
            1..=3 => 8,
            4 | 5 => 16,
            _ => size_of::<RulesetAttr>(),
        };
        let mut rules = Vec::new();
        let lists = [(read_only, fs::READ_ONLY), (read_write, handled_fs)];
        for (paths, rights) in lists {
            for path in paths {
                let Ok(meta) = std::fs::metadata(path) else {
                    continue;
                };
                let mut allowed = rights & handled_fs;
                if !meta.is_dir() {
                    allowed &= fs::FILE_RIGHTS;
                }
                let c_path = CString::new(path.as_os_str().as_bytes())
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
                rules.push((c_path, allowed));
            }
        }
        Ok((
            Self {
                attr,
                attr_size,
                rules,
            },
            Coverage { network, scope },
        ))
    }

    /// Adds a directory rule that is only known to be valid in the child
    /// (the fresh `/proc`): read-only.
    pub(crate) fn allow_read_in_child(&mut self, path: &'static std::ffi::CStr) {
        self.rules.push((path.to_owned(), fs::READ_ONLY));
    }

    /// Adds a directory rule that is only known to be valid in the child
    /// (the filesystem view's private `/tmp`): every handled right.
    pub(crate) fn allow_write_in_child(&mut self, path: &'static std::ffi::CStr) {
        self.rules
            .push((path.to_owned(), self.attr.handled_access_fs));
    }

    /// Builds the ruleset and enforces it on this process (and so on what
    /// it execs). Sets `no_new_privs`, which Landlock requires.
    ///
    /// # Safety
    /// Async-signal-safe; for the forked child.
    pub(crate) unsafe fn apply(&self) -> io::Result<()> {
        // SAFETY: (the whole block) the landlock syscalls, open, close and prctl
        // are async-signal-safe; all pointers point into `self`, prepared
        // before the fork, or into locals that live for the call.
        unsafe {
            let ruleset = libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &self.attr as *const RulesetAttr,
                self.attr_size,
                0 as libc::c_uint,
            );
            let Ok(ruleset) = libc::c_int::try_from(ruleset) else {
                return Err(io::Error::last_os_error());
            };
            if ruleset < 0 {
                return Err(io::Error::last_os_error());
            }
            let result = self.fill_and_restrict(ruleset);
            libc::close(ruleset);
            result
        }
    }

    /// # Safety
    /// As [`Self::apply`].
    unsafe fn fill_and_restrict(&self, ruleset: libc::c_int) -> io::Result<()> {
        // SAFETY: as in `apply`.
        unsafe {
            for (path, allowed) in &self.rules {
                let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
                if fd < 0 {
                    // Gone since the plan was made: nothing to allow there.
                    continue;
                }
                let rule = PathBeneathAttr {
                    allowed_access: *allowed,
                    parent_fd: fd,
                };
                let rc = libc::syscall(
                    libc::SYS_landlock_add_rule,
                    ruleset,
                    RULE_PATH_BENEATH,
                    &rule as *const PathBeneathAttr,
                    0 as libc::c_uint,
                );
                let error = io::Error::last_os_error();
                libc::close(fd);
                if rc != 0 {
                    return Err(error);
                }
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0 as libc::c_uint) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// The Landlock ABI version this kernel offers, or why there is none.
pub(crate) fn abi_version() -> Result<i32, String> {
    const CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attr, size 0 and the VERSION flag the call only
    // returns a number.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    if rc > 0 {
        return i32::try_from(rc).map_err(|_| format!("unexpected Landlock ABI version {rc}"));
    }
    let error = io::Error::last_os_error();
    Err(match error.raw_os_error() {
        Some(libc::ENOSYS) => {
            "this kernel has no Landlock (Linux 5.13+ built with CONFIG_SECURITY_LANDLOCK)".into()
        }
        Some(libc::EOPNOTSUPP) => {
            "Landlock is built in but not enabled; add landlock to the lsm= boot parameter".into()
        }
        _ => format!("Landlock is unavailable: {error}"),
    })
}
