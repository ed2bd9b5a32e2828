//! The seccomp filter of a tool process: a second layer behind the
//! namespaces and Landlock, against the syscalls a tool never needs and an
//! escape would: debugging other processes, mounting, kernel keyrings, BPF,
//! perf, loading kernels or modules, io_uring and userfaultfd (both favourite
//! exploit primitives), and, with the network off, inet sockets.
//!
//! The program is compiled before the fork (seccompiler) and installed in
//! the child with two syscalls. Denied calls fail with EPERM rather than
//! killing the process, so Python raises a readable `PermissionError`.
//!
//! Known limit: on x86_64 kernels built with the x32 ABI, x32 syscall
//! numbers are not matched (Debian's and most distributions' kernels do
//! not enable it).

use std::collections::BTreeMap;
use std::io;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

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

/// A compiled filter, ready to install in the child.
#[derive(Debug, Clone)]
pub(crate) struct SeccompPlan {
    program: BpfProgram,
}

impl SeccompPlan {
    /// The filter for this architecture; `deny_inet` adds the socket rule.
    pub(crate) fn new(deny_inet: bool) -> Result<Self, String> {
        let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|_| {
            format!(
                "no seccomp filter for the {} architecture",
                std::env::consts::ARCH
            )
        })?;
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
            DENIED.iter().map(|nr| (*nr, Vec::new())).collect();
        if deny_inet {
            let family = |domain: libc::c_int| {
                let domain = u64::try_from(domain).unwrap_or(u64::MAX);
                SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, domain)
                    .and_then(|c| SeccompRule::new(vec![c]))
            };
            let socket_rules = [family(libc::AF_INET), family(libc::AF_INET6)]
                .into_iter()
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("cannot build the socket rule: {e}"))?;
            rules.insert(libc::SYS_socket, socket_rules);
        }
        let eperm = u32::try_from(libc::EPERM).unwrap_or(1);
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(eperm),
            arch,
        )
        .map_err(|e| format!("cannot build the seccomp filter: {e}"))?;
        let program = BpfProgram::try_from(filter)
            .map_err(|e| format!("cannot compile the seccomp filter: {e}"))?;
        Ok(Self { program })
    }

    /// Installs the filter on this process (sets `no_new_privs` first, as
    /// an unprivileged filter requires).
    ///
    /// # Safety
    /// Async-signal-safe on success; for the forked child.
    pub(crate) unsafe fn apply(&self) -> io::Result<()> {
        seccompiler::apply_filter(&self.program).map_err(|e| match e {
            seccompiler::Error::Prctl(e) | seccompiler::Error::Seccomp(e) => e,
            _ => io::Error::from(io::ErrorKind::InvalidInput),
        })
    }
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
