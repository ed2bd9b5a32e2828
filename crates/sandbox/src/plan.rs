//! Deciding, before the fork, which protections a child gets: the rlimits to
//! set, the cgroup to create, and the status that records what is and is not
//! in force.
//!
//! Nothing here starts a process; a cgroup it creates is removed again when
//! the returned handle is dropped.

use subagent_protocol::session::SandboxStatus;

use crate::cgroup::{ChildCgroup, cgroup_support};
use crate::error::SpawnError;
use crate::spec::{ResourceLimits, SandboxSpec};
use crate::status::Protection;
use crate::unix::{self, RlimitResource};

/// Seconds of CPU between SIGXCPU (soft limit) and SIGKILL (hard limit):
/// SIGXCPU can be caught or ignored, the hard limit cannot.
const CPU_HARD_LIMIT_EXTRA_SECONDS: u64 = 1;

/// The protections every child gets, whatever its limits.
pub(crate) fn base_status() -> SandboxStatus {
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

pub(crate) fn check_cwd(spec: &SandboxSpec) -> Result<(), SpawnError> {
    match std::fs::metadata(&spec.cwd) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(SpawnError::Cwd {
            cwd: spec.cwd.clone(),
            reason: "it is not a directory".into(),
        }),
        Err(e) => Err(SpawnError::Cwd {
            cwd: spec.cwd.clone(),
            reason: e.to_string(),
        }),
    }
}

/// The rlimits to set, each clamped to the current hard limit (which only an
/// unprivileged process cannot raise; a lower cap is still a cap).
pub(crate) fn plan_rlimits(
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

/// Creates the child's cgroup when memory or pids caps are asked for, and
/// records what could and could not be applied.
pub(crate) fn plan_cgroup(
    limits: &ResourceLimits,
    status: &mut SandboxStatus,
) -> Option<ChildCgroup> {
    if !limits.wants_cgroup() {
        return None;
    }
    let created = cgroup_support().and_then(|kind| ChildCgroup::create(&kind, limits));
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
            if limits.memory_bytes.is_some() {
                Protection::CgroupMemory.refused(status, reason.as_str());
                Protection::CgroupMemorySwap.refused(status, reason.as_str());
            }
            if limits.pids.is_some() {
                Protection::CgroupPids.refused(status, reason);
            }
            None
        }
    }
}
