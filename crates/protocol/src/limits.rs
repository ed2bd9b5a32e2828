//! Per-child limits and their defaults: the one place each default is written.
//!
//! The same type travels in `TaskSpec` (so the worker knows its tool caps) and
//! is recorded in the session header (so an operator sees what was in force).

use serde::{Deserialize, Serialize};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;

/// Hard and soft limits of one child run. Every field is configurable per
/// agent and per call; [`Limits::default`] holds the documented defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// Wall-clock limit of the whole child, ms (default 900 s).
    pub wall_timeout_ms: u64,
    /// Longest stretch with no model or tool progress, ms (default 180 s).
    pub idle_timeout_ms: u64,
    /// Time between SIGTERM and SIGKILL of the process group, ms (default 5 s).
    pub kill_grace_ms: u64,
    /// Worker stdout captured before the group is killed, bytes (default 8 MiB).
    pub stdout_bytes: u64,
    /// Worker stderr captured before the group is killed, bytes (default 1 MiB).
    pub stderr_bytes: u64,
    /// Memory including swap, enforced by cgroup, bytes (default 2 GiB).
    pub memory_bytes: u64,
    /// Processes and threads in the child's cgroup (default 256).
    pub pids: u64,
    /// Largest file the child may write (RLIMIT_FSIZE), bytes (default 256 MiB).
    pub file_size_bytes: u64,
    /// Open file descriptors (RLIMIT_NOFILE) (default 1024).
    pub open_files: u64,
    /// CPU seconds (RLIMIT_CPU); `None` leaves CPU time to the wall timeout.
    pub cpu_seconds: Option<u64>,
    /// Text returned to the parent before truncation, bytes (default 200 KiB).
    pub returned_text_bytes: u64,
    /// Text returned to the parent before truncation, lines (default 5,000).
    pub returned_text_lines: u64,
    /// Tool output shown to the model, bytes (default 50 KiB).
    pub tool_output_bytes: u64,
    /// Tool output shown to the model, lines (default 2,000).
    pub tool_output_lines: u64,
    /// Wall-clock limit of one tool call when the call names none, ms
    /// (default 60 s).
    pub tool_timeout_ms: u64,
    /// Longest wall-clock limit a call may ask for (python_execute's
    /// `timeout_seconds`), ms (default 120 s: below the idle timeout, so a
    /// long tool call ends as a tool error the model reads, not an idle kill).
    pub tool_timeout_max_ms: u64,
    /// Memory including swap of one tool process tree, bytes (default 1 GiB).
    pub tool_memory_bytes: u64,
    /// Processes and threads of one tool process tree (default 64).
    pub tool_pids: u64,
    /// How much the run's process tools (python_execute) may grow the
    /// workspace, bytes, measured as allocated blocks against the
    /// workspace at the run's first process-tool call (default 1 GiB): a
    /// call that passes it is stopped. Absent from session headers written
    /// before it existed, which read as the default.
    #[serde(default = "default_tool_disk_bytes")]
    pub tool_disk_bytes: u64,
    /// Bytes the worker may send over the protocol socket in one run
    /// (default 64 MiB): a real run sends a few MiB at most (tool results are
    /// capped), so this only stops a flooding or broken worker.
    pub protocol_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            wall_timeout_ms: 900_000,
            idle_timeout_ms: 180_000,
            kill_grace_ms: 5_000,
            stdout_bytes: 8 * MIB,
            stderr_bytes: MIB,
            memory_bytes: 2 * GIB,
            pids: 256,
            file_size_bytes: 256 * MIB,
            open_files: 1024,
            cpu_seconds: None,
            returned_text_bytes: 200 * KIB,
            returned_text_lines: 5_000,
            tool_output_bytes: 50 * KIB,
            tool_output_lines: 2_000,
            tool_timeout_ms: 60_000,
            tool_timeout_max_ms: 120_000,
            tool_memory_bytes: GIB,
            tool_pids: 64,
            tool_disk_bytes: default_tool_disk_bytes(),
            protocol_bytes: 64 * MIB,
        }
    }
}

/// [`Limits::tool_disk_bytes`]'s default, 1 GiB: room for datasets and
/// build outputs, far from filling a disk.
fn default_tool_disk_bytes() -> u64 {
    GIB
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_header_written_before_tool_disk_reads_the_default() {
        let mut old = serde_json::to_value(Limits::default()).unwrap();
        // The field must be there to be taken out, or this test pins nothing.
        let removed = old.as_object_mut().unwrap().remove("toolDiskBytes");
        assert!(removed.is_some(), "{old}");
        let read: Limits = serde_json::from_value(old).unwrap();
        assert_eq!(read.tool_disk_bytes, GIB);
        assert_eq!(read, Limits::default());
    }
}
