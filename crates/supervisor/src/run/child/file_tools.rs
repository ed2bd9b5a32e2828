//! What the session header says about the file tools' own wall: each
//! `bash_read`/`bash_find`/`bash_ripgrep`/`list_dir` call reads (and each
//! `write_file`/`edit_file`/`multi_edit` call writes) on a thread that
//! Landlocks itself to the workspace (`subagent_tools`'s `confined`
//! module). The worker applies it per call; the header forecasts it from
//! the kernel's Landlock support, as `toolSandbox` forecasts the tool
//! processes' layers. This module only reports; it never refuses a run.

use subagent_protocol::session::{NotApplied, SandboxStatus};
use subagent_protocol::tool_names::{EDIT_FILE, MULTI_EDIT, READ_ONLY_TOOLS, WRITE_FILE};

/// The protection's name in the header's `sandbox`. Stable: operators grep
/// session files for it.
pub(in crate::run) const FILE_TOOLS_LANDLOCK: &str = "file_tools_landlock";

/// Adds the file tools' Landlock to `status` when the child has a file
/// tool: applied, or not applied with the kernel's reason.
pub(in crate::run) fn forecast(tools: &[String], status: &mut SandboxStatus) {
    let file_tool = |t: &String| {
        READ_ONLY_TOOLS.contains(&t.as_str())
            || [WRITE_FILE, EDIT_FILE, MULTI_EDIT].contains(&t.as_str())
    };
    if !tools.iter().any(file_tool) {
        return;
    }
    match &subagent_sandbox::isolation_support().landlock_abi {
        Ok(_) => status.applied.push(FILE_TOOLS_LANDLOCK.to_owned()),
        Err(reason) => status.not_applied.push(NotApplied {
            protection: FILE_TOOLS_LANDLOCK.to_owned(),
            reason: format!("{reason}; the file tools read behind their other checks only"),
        }),
    }
}
