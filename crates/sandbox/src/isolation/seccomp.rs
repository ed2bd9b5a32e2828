//! The seccomp filters of a tool process: a second layer behind the
//! namespaces, the filesystem view and Landlock, against the syscalls a
//! tool never needs and an escape would: debugging other processes,
//! mounting, kernel keyrings, BPF, perf, loading kernels or modules,
//! io_uring and userfaultfd (both favourite exploit primitives); setuid and
//! setgid modes, new namespaces and socket families other than unix and
//! inet (systemd's `RestrictSUIDSGID=`, `RestrictNamespaces=`,
//! `RestrictAddressFamilies=`; rules in [`super::seccomp_rules`]); and,
//! with the network off, inet sockets.
//!
//! Three programs, one per answer, because a seccompiler filter has one
//! action for all its matches: EPERM for what is refused (Python raises a
//! readable `PermissionError`), ENOSYS for `clone3` and `openat2` (so libc
//! falls back to calls whose flags the filter can read), EAFNOSUPPORT for
//! other socket families. They match disjoint calls, so the kernel's rule
//! of taking the strictest answer of all filters never has to choose. Each
//! is compiled before the fork and installed in the child with two
//! syscalls.
//!
//! Known limit: on x86_64 kernels built with the x32 ABI, x32 syscall
//! numbers are not matched (Debian's and most distributions' kernels do
//! not enable it).

use std::io;

use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch};

use super::seccomp_rules::{self, Rules};

/// Syscalls denied whatever the network setting.
const DENIED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_io_uring_setup,
    libc::SYS_userfaultfd,
];

/// Compiled filters, ready to install in the child.
#[derive(Debug, Clone)]
pub(crate) struct SeccompPlan {
    programs: Vec<BpfProgram>,
}

impl SeccompPlan {
    /// The filters for this architecture; `deny_inet` adds the inet socket
    /// rule.
    pub(crate) fn new(deny_inet: bool) -> Result<Self, String> {
        let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|_| {
            format!(
                "no seccomp filter for the {} architecture",
                std::env::consts::ARCH
            )
        })?;
        let mut refused: Rules = DENIED.iter().map(|nr| (*nr, Vec::new())).collect();
        let built = seccomp_rules::suid_sgid(&mut refused)
            .and_then(|()| seccomp_rules::namespaces(&mut refused))
            .and_then(|()| seccomp_rules::memfd_exec(&mut refused))
            .and_then(|()| {
                if deny_inet {
                    seccomp_rules::inet(&mut refused)
                } else {
                    Ok(())
                }
            });
        built.map_err(|e| format!("cannot build the seccomp rules: {e}"))?;
        let families = seccomp_rules::address_families()
            .map_err(|e| format!("cannot build the socket family rule: {e}"))?;
        let programs = [
            (refused, libc::EPERM),
            (seccomp_rules::unreadable_flags(), libc::ENOSYS),
            (families, libc::EAFNOSUPPORT),
        ]
        .into_iter()
        .map(|(rules, errno)| compile(rules, errno, arch))
        .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { programs })
    }

    /// Installs the filters on this process (sets `no_new_privs` first, as
    /// an unprivileged filter requires).
    ///
    /// # Safety
    /// Async-signal-safe on success; for the forked child.
    pub(crate) unsafe fn apply(&self) -> io::Result<()> {
        for program in &self.programs {
            seccompiler::apply_filter(program).map_err(|e| match e {
                seccompiler::Error::Prctl(e) | seccompiler::Error::Seccomp(e) => e,
                _ => io::Error::from(io::ErrorKind::InvalidInput),
            })?;
        }
        Ok(())
    }
}

/// One program: every call in `rules` answered `errno`, the rest allowed.
fn compile(rules: Rules, errno: i32, arch: TargetArch) -> Result<BpfProgram, String> {
    let errno = u32::try_from(errno).unwrap_or(1);
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno),
        arch,
    )
    .map_err(|e| format!("cannot build the seccomp filter: {e}"))?;
    BpfProgram::try_from(filter).map_err(|e| format!("cannot compile the seccomp filter: {e}"))
}

/// Whether this kernel takes seccomp filters, or why not.
pub(crate) fn support() -> Result<(), String> {
    // SAFETY: PR_GET_SECCOMP takes no pointer arguments.
    let rc = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    if rc < 0 {
        return Err(format!(
            "this kernel has no seccomp ({}); it needs CONFIG_SECCOMP_FILTER",
            io::Error::last_os_error()
        ));
    }
    SeccompPlan::new(true).map(|_| ())
}
