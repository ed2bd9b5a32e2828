//! The rule that makes a recording evidence, not authority: what a resumed
//! run gets is what the current invocation gives it (its flags, config,
//! agent and ceilings), and a recorded value may only lower that. A
//! recorded workspace is used only when it lies within the current one.
//!
//! Pure but for the workspace's real path: values in, values out.

use std::path::{Path, PathBuf};

use subagent_protocol::session::SessionHeader;
use subagent_protocol::{Budget, Limits};

use crate::config::{LimitKey, LimitSet};

/// Every limit of `current` lowered to the recorded one where that is
/// lower, except the limits the caller named itself (`named`): those are
/// the caller's, whatever the recording says. Budgets likewise (an
/// uncapped cost is the highest).
pub(crate) fn lower_limits(
    limits: &mut Limits,
    budget: &mut Budget,
    header: &SessionHeader,
    named: &LimitSet,
) {
    let recorded = &header.limits;
    let unnamed = |key: LimitKey| named.get(key).is_none();
    let lower = |now: &mut u64, then: u64, key: Option<LimitKey>| {
        if key.is_none_or(unnamed) {
            *now = (*now).min(then);
        }
    };
    lower(
        &mut limits.wall_timeout_ms,
        recorded.wall_timeout_ms,
        Some(LimitKey::Timeout),
    );
    lower(
        &mut limits.idle_timeout_ms,
        recorded.idle_timeout_ms,
        Some(LimitKey::IdleTimeout),
    );
    lower(&mut limits.kill_grace_ms, recorded.kill_grace_ms, None);
    lower(
        &mut limits.stdout_bytes,
        recorded.stdout_bytes,
        Some(LimitKey::StdoutLimit),
    );
    lower(
        &mut limits.stderr_bytes,
        recorded.stderr_bytes,
        Some(LimitKey::StderrLimit),
    );
    lower(
        &mut limits.memory_bytes,
        recorded.memory_bytes,
        Some(LimitKey::Memory),
    );
    lower(&mut limits.pids, recorded.pids, Some(LimitKey::Pids));
    lower(&mut limits.file_size_bytes, recorded.file_size_bytes, None);
    lower(&mut limits.open_files, recorded.open_files, None);
    limits.cpu_seconds = match (limits.cpu_seconds, recorded.cpu_seconds) {
        (Some(now), Some(then)) => Some(now.min(then)),
        (now, then) => now.or(then),
    };
    lower(
        &mut limits.returned_text_bytes,
        recorded.returned_text_bytes,
        Some(LimitKey::ReturnLimit),
    );
    lower(
        &mut limits.returned_text_lines,
        recorded.returned_text_lines,
        None,
    );
    lower(
        &mut limits.tool_output_bytes,
        recorded.tool_output_bytes,
        None,
    );
    lower(
        &mut limits.tool_output_lines,
        recorded.tool_output_lines,
        None,
    );
    lower(
        &mut limits.tool_timeout_ms,
        recorded.tool_timeout_ms,
        Some(LimitKey::ToolTimeout),
    );
    lower(
        &mut limits.tool_timeout_max_ms,
        recorded.tool_timeout_max_ms,
        None,
    );
    lower(
        &mut limits.tool_memory_bytes,
        recorded.tool_memory_bytes,
        Some(LimitKey::ToolMemory),
    );
    lower(
        &mut limits.tool_pids,
        recorded.tool_pids,
        Some(LimitKey::ToolPids),
    );
    lower(
        &mut limits.tool_disk_bytes,
        recorded.tool_disk_bytes,
        Some(LimitKey::ToolDisk),
    );
    lower(&mut limits.protocol_bytes, recorded.protocol_bytes, None);
    if unnamed(LimitKey::MaxTurns)
        && let Some(then) = header.max_turns
    {
        budget.max_turns = budget.max_turns.min(then);
    }
    if unnamed(LimitKey::MaxCost) {
        budget.max_cost = match (budget.max_cost, header.max_cost) {
            (Some(now), Some(then)) => Some(now.min(then)),
            (now, then) => now.or(then),
        };
    }
}

/// The recorded tools the current invocation also gives (`current`), in
/// the recording's order: a recorded tool beyond them is dropped.
pub(crate) fn lower_tools(recorded: &[String], current: &[String]) -> Vec<String> {
    recorded
        .iter()
        .filter(|t| current.contains(t))
        .cloned()
        .collect()
}

/// Why a recorded workspace is not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OutsideWorkspace {
    /// It lies outside the current workspace.
    Outside,
    /// It (or the current one) cannot be resolved: gone, or unreadable.
    Unresolved(String),
}

/// The recorded workspace when it lies within `current` (both resolved,
/// links and all): a recording may narrow where a run works, never move it
/// elsewhere.
pub(crate) fn recorded_workspace(
    recorded: &Path,
    current: &Path,
) -> Result<PathBuf, OutsideWorkspace> {
    let resolve = |p: &Path| {
        std::fs::canonicalize(p)
            .map_err(|e| OutsideWorkspace::Unresolved(format!("{}: {e}", p.display())))
    };
    let (recorded_real, current_real) = (resolve(recorded)?, resolve(current)?);
    if recorded_real.starts_with(&current_real) {
        Ok(recorded_real)
    } else {
        Err(OutsideWorkspace::Outside)
    }
}
