//! Deciding, before the fork, which protections a child gets: the rlimits to
//! set, the cgroup to create, and the status that records what is and is not
//! in force.
//!
//! Nothing here starts a process; a cgroup it creates is removed again when
//! the returned handle is dropped.

use subagent_protocol::session::{NotApplied, SandboxStatus};

use crate::cgroup::{ChildCgroup, cgroup_support};
use crate::error::SpawnError;
use crate::spec::{ResourceLimits, SandboxSpec};
use crate::status::protection;
use crate::unix::{self, RlimitResource};

/// Seconds of CPU between SIGXCPU (soft limit) and SIGKILL (hard limit):
/// SIGXCPU can be caught or ignored, the hard limit cannot.
const CPU_HARD_LIMIT_EXTRA_SECONDS: u64 = 1;

/// The protections every child gets, whatever its limits.
pub(crate) fn base_status() -> SandboxStatus {
    SandboxStatus {
        applied: [
            protection::PROCESS_GROUP,
            protection::ENV_CLEARED,
            protection::STDIN_NULL,
            protection::CLOSE_OTHER_FDS,
            protection::PARENT_DEATH_SIGNAL,
        ]
        .map(String::from)
        .to_vec(),
        not_applied: Vec::new(),
    }
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
    applied: &mut Vec<String>,
) -> Vec<(RlimitResource, u64, u64)> {
    let mut plan = vec![(RlimitResource::Core, 0, 0)];
    applied.push(protection::RLIMIT_CORE.into());
    let requested = [
        (
            RlimitResource::OpenFiles,
            limits.open_files,
            protection::RLIMIT_NOFILE,
        ),
        (
            RlimitResource::FileSize,
            limits.file_size_bytes,
            protection::RLIMIT_FSIZE,
        ),
        (
            RlimitResource::CpuSeconds,
            limits.cpu_seconds,
            protection::RLIMIT_CPU,
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
        applied.push(name.into());
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
            status
                .applied
                .extend(setup.applied.iter().map(|s| s.to_string()));
            status.not_applied.extend(setup.not_applied);
            Some(setup.cgroup)
        }
        Err(reason) => {
            let mut refuse = |protection: &str| {
                status.not_applied.push(NotApplied {
                    protection: protection.into(),
                    reason: reason.clone(),
                });
            };
            if limits.memory_bytes.is_some() {
                refuse(protection::CGROUP_MEMORY);
                refuse(protection::CGROUP_MEMORY_SWAP);
            }
            if limits.pids.is_some() {
                refuse(protection::CGROUP_PIDS);
            }
            None
        }
    }
}
