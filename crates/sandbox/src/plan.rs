//! Deciding, before the fork, which protections a child gets: the rlimits to
//! set, the cgroup to create, the tool sandbox's layers, and the status that
//! records what is and is not in force.
//!
//! [`plan`] does file-system and cgroupfs work, so it runs on the chores
//! thread ([`crate::chores`]), never on the caller's runtime. Nothing here
//! starts a process; a cgroup it creates is removed again when the returned
//! handle is dropped.

use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};

use subagent_protocol::session::SandboxStatus;

use crate::cgroup::{ChildCgroup, cgroup_support_cached};
use crate::error::SpawnError;
use crate::isolation::enter::IsolationSetup;
use crate::isolation::{self, Isolation};
use crate::spec::ResourceLimits;
use crate::status::Protection;
use crate::unix::{self, RlimitResource};

/// Seconds of CPU between SIGXCPU (soft limit) and SIGKILL (hard limit):
/// SIGXCPU can be caught or ignored, the hard limit cannot.
const CPU_HARD_LIMIT_EXTRA_SECONDS: u64 = 1;

/// What one child will get, decided before the fork.
#[derive(Debug)]
pub(crate) struct Planned {
    pub(crate) status: SandboxStatus,
    pub(crate) rlimits: Vec<(RlimitResource, u64, u64)>,
    pub(crate) cgroup: Option<ChildCgroup>,
    pub(crate) isolation: Option<IsolationSetup>,
}

/// Checks the working directory (by `cwd_fd` when the caller opened it)
/// and plans every protection, in the order the status lists them.
pub(crate) fn plan(
    cwd: &Path,
    cwd_fd: Option<BorrowedFd<'_>>,
    limits: &ResourceLimits,
    isolation: Option<&Isolation>,
) -> Result<Planned, SpawnError> {
    check_cwd(cwd, cwd_fd)?;
    let mut status = base_status();
    let mut rlimits = plan_rlimits(limits, &mut status);
    let cgroup = plan_cgroup(limits, &mut status);
    rlimits.extend(memory_fallback(limits, &mut status));
    let isolation =
        isolation.map(|i| isolation::plan::plan(i, Some(cwd), cwd_fd.is_some(), &mut status));
    Ok(Planned {
        status,
        rlimits,
        cgroup,
        isolation,
    })
}

/// The protections every child gets, whatever its limits.
fn base_status() -> SandboxStatus {
    let mut status = SandboxStatus::default();
    for protection in [
        Protection::ProcessGroup,
        Protection::EnvCleared,
        Protection::StdinNull,
        Protection::CloseOtherFds,
        Protection::ParentDeathSignal,
    ] {
        protection.applied(&mut status);
    }
    status
}

fn check_cwd(cwd: &Path, cwd_fd: Option<BorrowedFd<'_>>) -> Result<(), SpawnError> {
    let refuse = |reason: String| SpawnError::Cwd {
        cwd: PathBuf::from(cwd),
        reason,
    };
    let metadata = match cwd_fd {
        Some(fd) => fd
            .try_clone_to_owned()
            .and_then(|fd| std::fs::File::from(fd).metadata()),
        None => std::fs::metadata(cwd),
    };
    match metadata {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(refuse("it is not a directory".into())),
        Err(e) => Err(refuse(e.to_string())),
    }
}

/// The rlimits to set, each clamped to the current hard limit (which only an
/// unprivileged process cannot raise; a lower cap is still a cap).
fn plan_rlimits(
    limits: &ResourceLimits,
    status: &mut SandboxStatus,
) -> Vec<(RlimitResource, u64, u64)> {
    let mut plan = vec![(RlimitResource::Core, 0, 0)];
    Protection::RlimitCore.applied(status);
    let requested = [
        (
            RlimitResource::OpenFiles,
            limits.open_files,
            Protection::RlimitNofile,
        ),
        (
            RlimitResource::FileSize,
            limits.file_size_bytes,
            Protection::RlimitFsize,
        ),
        (
            RlimitResource::CpuSeconds,
            limits.cpu_seconds,
            Protection::RlimitCpu,
        ),
    ];
    for (resource, value, name) in requested {
        let Some(value) = value else { continue };
        let ceiling = unix::hard_limit(resource);
        let soft = value.min(ceiling);
        // At the CPU soft limit the kernel sends SIGXCPU (reported as such);
        // the hard limit one step later SIGKILLs a child that ignores it.
        let hard = if resource == RlimitResource::CpuSeconds {
            soft.saturating_add(CPU_HARD_LIMIT_EXTRA_SECONDS)
                .min(ceiling)
        } else {
            soft
        };
        plan.push((resource, soft, hard));
        name.applied(status);
    }
    plan
}

/// The memory ceiling of a child whose memory no cgroup caps (no writable
/// cgroup here, or its memory cap could not be written): RLIMIT_DATA at the
/// requested bytes, clamped to our own hard limit.
///
/// RLIMIT_DATA rather than RLIMIT_AS: the data limit counts the private
/// writable memory a process maps (heap, anonymous mappings, thread stacks),
/// which is what a memory hog grows, while the address-space limit also
/// counts shared libraries and the address space malloc reserves without
/// using it (glibc reserves 64 MiB per thread arena, `PROT_NONE` until
/// used): a worker with a few tokio threads, or a Python importing numpy,
/// would pass a modest RLIMIT_AS without using the memory. Under the data
/// limit an allocation past it fails (Python raises `MemoryError`, Rust
/// aborts), where a cgroup would OOM-kill. It is weaker than the cgroup in
/// two ways the status says: it caps each process, not the tree (a fork
/// gets its own), and it does not count page cache or shared memory.
fn memory_fallback(
    limits: &ResourceLimits,
    status: &mut SandboxStatus,
) -> Option<(RlimitResource, u64, u64)> {
    let bytes = limits.memory_bytes?;
    let capped = status
        .applied
        .iter()
        .any(|p| p == Protection::CgroupMemory.name());
    if capped {
        return None;
    }
    let value = bytes.min(unix::hard_limit(RlimitResource::Data));
    Protection::RlimitMemory.applied(status);
    Some((RlimitResource::Data, value, value))
}

/// Creates the child's cgroup when memory or pids caps are asked for, and
/// records what could and could not be applied.
fn plan_cgroup(limits: &ResourceLimits, status: &mut SandboxStatus) -> Option<ChildCgroup> {
    if !limits.wants_cgroup() {
        return None;
    }
    let created =
        cgroup_support_cached().and_then(|kind| crate::cgroup::take_or_create(&kind, limits));
    match created {
        Ok(setup) => {
            for protection in setup.applied {
                protection.applied(status);
            }
            for (protection, reason) in setup.not_applied {
                protection.refused(status, reason);
            }
            Some(setup.cgroup)
        }
        Err(reason) => {
            refuse_cgroup_caps(limits, status, &reason);
            None
        }
    }
}

/// Records each cgroup cap `limits` asks for as not applied, for `reason`.
fn refuse_cgroup_caps(limits: &ResourceLimits, status: &mut SandboxStatus, reason: &str) {
    if limits.memory_bytes.is_some() {
        Protection::CgroupMemory.refused(status, reason);
        Protection::CgroupMemorySwap.refused(status, reason);
    }
    if limits.pids.is_some() {
        Protection::CgroupPids.refused(status, reason);
    }
}

/// What a child with `limits` would get of the memory and pids caps here,
/// without creating anything: the cgroup caps where a writable cgroup with
/// those controllers is found, else each of them not applied with why, and
/// the RLIMIT_DATA fallback for memory. For forecasts (a session header's
/// `toolSandbox`); [`plan`] records what a real spawn got.
pub fn resource_status(limits: &ResourceLimits) -> SandboxStatus {
    let mut status = SandboxStatus::default();
    if !limits.wants_cgroup() {
        return status;
    }
    match cgroup_support_cached() {
        Ok(_) => {
            if limits.memory_bytes.is_some() {
                Protection::CgroupMemory.applied(&mut status);
            }
            if limits.pids.is_some() {
                Protection::CgroupPids.applied(&mut status);
            }
        }
        Err(reason) => refuse_cgroup_caps(limits, &mut status, &reason),
    }
    let _ = memory_fallback(limits, &mut status);
    status
}
