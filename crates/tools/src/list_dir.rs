//! `list_dir`: one directory's entries with their kind and size, with
//! Claude Code's `LS` parameters (`path`, `ignore` globs).
//!
//! The directory is opened beneath the workspace root ([`Workspace::open`])
//! on a thread Landlocked to reading the workspace ([`crate::confined`]);
//! entries are looked at without following symlinks, and at most
//! [`MAX_LISTED_ENTRIES`] are listed (the rest are counted). This tool never
//! writes.

use std::os::fd::OwnedFd;

use globset::{Glob, GlobSet, GlobSetBuilder};
use rustix::fs::AtFlags;
use serde::Deserialize;
use subagent_protocol::tool_names::LIST_DIR;

use crate::arguments::parse_arguments;
use crate::beneath::{self, EntryKind, Opened};
use crate::blocking::CancelFlag;
use crate::confined::run_confined;
use crate::tool::{Tool, ToolContext, ToolError, ToolFuture, ToolOutput};
use crate::workspace::Workspace;

/// Entries listed at most; the rest are counted.
pub const MAX_LISTED_ENTRIES: usize = 1_000;

/// Most `ignore` globs one call may pass.
const MAX_IGNORE_GLOBS: usize = 100;

/// The `list_dir` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct ListDir;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListArguments {
    #[serde(default)]
    pub(crate) path: Option<String>,
    #[serde(default)]
    pub(crate) ignore: Vec<String>,
}

impl Tool for ListDir {
    fn name(&self) -> &str {
        LIST_DIR
    }

    fn description(&self) -> &str {
        "List a directory of the workspace: each entry with its kind (file, dir, symlink, other) \
         and a file's size in bytes, sorted by name, hidden entries included. `ignore` takes \
         glob patterns of names to leave out. Paths are relative to the workspace root (default: \
         the root)."
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The directory to list, relative to the workspace root (default: the root)."},
                "ignore": {
                    "type": "array",
                    "items": {"type": "string"},
                    "maxItems": MAX_IGNORE_GLOBS,
                    "description": "Glob patterns of entry names to leave out, e.g. [\"*.log\", \"node_modules\"]."
                }
            },
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, arguments: serde_json::Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let arguments: ListArguments = parse_arguments(arguments)?;
            let workspace_dir = ctx.workspace_dir.clone();
            let text = run_confined(ctx, move |cancel| {
                let workspace = Workspace::new(&workspace_dir)?;
                list(&workspace, &arguments, cancel)
            })
            .await?;
            Ok(ToolOutput::text(text))
        })
    }
}

fn ignore_set(globs: &[String]) -> Result<GlobSet, ToolError> {
    if globs.len() > MAX_IGNORE_GLOBS {
        return Err(ToolError::InvalidArguments(format!(
            "ignore holds {} patterns, more than the {MAX_IGNORE_GLOBS} accepted",
            globs.len()
        )));
    }
    let mut set = GlobSetBuilder::new();
    for glob in globs {
        let glob = Glob::new(glob).map_err(|e| {
            ToolError::InvalidArguments(format!("ignore pattern `{glob}` is not a glob: {e}"))
        })?;
        set.add(glob);
    }
    set.build()
        .map_err(|e| ToolError::InvalidArguments(format!("ignore patterns: {e}")))
}

/// The listing the model reads.
pub(crate) fn list(
    workspace: &Workspace,
    arguments: &ListArguments,
    cancel: &CancelFlag,
) -> Result<String, ToolError> {
    let ignore = ignore_set(&arguments.ignore)?;
    let asked = arguments.path.as_deref().unwrap_or("");
    let (path, opened) = workspace.open(asked)?;
    let shown = workspace.display(&path);
    let Opened::Directory(dir) = opened else {
        return Err(ToolError::Failed(format!(
            "`{shown}` is not a directory; list_dir lists directories (bash_read reads files)"
        )));
    };
    let cannot = |e: std::io::Error| ToolError::Failed(format!("cannot list `{shown}`: {e}"));
    let entries = beneath::entries(&dir).map_err(cannot)?;
    let mut lines = Vec::new();
    let mut left_out = 0usize;
    for (name, kind) in entries {
        if cancel.is_raised() {
            return Err(CancelFlag::error());
        }
        if ignore.is_match(&name) {
            left_out += 1;
            continue;
        }
        lines.push(line(&dir, &name, kind));
    }
    if lines.is_empty() {
        return Ok(format!(
            "`{shown}` has no entries{}\n",
            if left_out > 0 {
                format!(" besides {left_out} ignored")
            } else {
                String::new()
            }
        ));
    }
    let mut out = format!("`{shown}`: {} entries", lines.len());
    if left_out > 0 {
        out.push_str(&format!(" ({left_out} ignored)"));
    }
    out.push('\n');
    for line in lines.iter().take(MAX_LISTED_ENTRIES) {
        out.push_str(line);
        out.push('\n');
    }
    if lines.len() > MAX_LISTED_ENTRIES {
        out.push_str(&format!(
            "... and {} more (pass ignore patterns, or use bash_find with a pattern)\n",
            lines.len() - MAX_LISTED_ENTRIES
        ));
    }
    Ok(out)
}

fn line(dir: &OwnedFd, entry: &std::ffi::OsStr, kind: EntryKind) -> String {
    let name = entry.to_string_lossy();
    match kind {
        EntryKind::Directory => format!("{name}/\tdir"),
        EntryKind::Symlink => format!("{name}@\tsymlink"),
        EntryKind::Other => format!("{name}\tother"),
        EntryKind::File => match rustix::fs::statat(dir, entry, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => format!("{name}\tfile\t{} bytes", stat.st_size),
            Err(_) => format!("{name}\tfile"),
        },
    }
}

#[cfg(test)]
#[path = "list_dir_tests.rs"]
mod tests;
