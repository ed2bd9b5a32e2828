//! `bash_find`: the files under a directory whose path matches a glob.
//!
//! In: a glob, an optional directory (default: the workspace root) and a
//! result cap. Out: matching files, one root-relative path per line, sorted,
//! with a last line saying how many more there were. The walk is the
//! workspace's ([`Workspace::walk`]): `.gitignore`, `.ignore` and hidden
//! files are skipped as ripgrep skips them. Only regular files are listed;
//! symlinks are never followed. This tool never reads file contents and
//! never touches a path outside the workspace: the walk goes by directory
//! fds opened beneath the root ([`crate::walk`]).

use std::collections::BinaryHeap;
use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};
use serde::Deserialize;
use subagent_protocol::tool_names::BASH_FIND;

use crate::arguments::{count_in_range, parse_arguments};
use crate::beneath::EntryKind;
use crate::blocking::CancelFlag;
use crate::confined::run_confined;
use crate::tool::{Tool, ToolContext, ToolError, ToolFuture, ToolOutput};
use crate::workspace::Workspace;

/// Paths listed when the call names no `max_results`.
pub const FIND_DEFAULT_MAX_RESULTS: usize = 200;
/// Largest `max_results` a call may ask for: more would be cut by the output
/// cap anyway (1,000 paths of ~50 bytes already fill 50 KiB).
pub const FIND_MAX_RESULTS: usize = 1_000;

const DESCRIPTION: &str = "Find files by glob pattern. Lists the files under `path` (default: the \
workspace root) whose path relative to the workspace root matches `pattern`, one path per line, \
sorted. A pattern without `/` matches the file name in any directory (`*.rs`, `Cargo.toml`); a \
pattern with `/` matches the whole relative path (`src/**/*.rs`, `**/tests/*.py`). Files listed \
in .gitignore or .ignore and hidden files and directories are skipped, like ripgrep does; name a \
hidden directory as `path` to look inside it. Lists files only, not directories (use bash_read on \
a directory for its entries).";

/// The `bash_find` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct BashFind;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FindArguments {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    max_results: Option<u64>,
}

impl Tool for BashFind {
    fn name(&self) -> &str {
        BASH_FIND
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "description": "Glob to match, e.g. `*.rs`, `Cargo.toml`, `src/**/*.ts`. Without `/` it matches file names anywhere; with `/` the path relative to the workspace root."
                },
                "path": {
                    "type": "string",
                    "description": "Directory to search, relative to the workspace root. Default: the workspace root."
                },
                "max_results": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": FIND_MAX_RESULTS,
                    "description": format!("Most paths to list (default {FIND_DEFAULT_MAX_RESULTS}). The count of the rest is given.")
                }
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, arguments: serde_json::Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let arguments: FindArguments = parse_arguments(arguments)?;
            let workspace_dir = ctx.workspace_dir.clone();
            let text =
                run_confined(ctx, move |cancel| find(&workspace_dir, &arguments, cancel)).await?;
            Ok(ToolOutput::text(text))
        })
    }
}

/// A glob over root-relative paths. One without `/` matches the file name
/// in any directory, as in `.gitignore` and ripgrep's `--glob`.
#[derive(Debug, Clone)]
pub(crate) struct PathGlob {
    matcher: GlobMatcher,
    name_only: bool,
}

impl PathGlob {
    /// Compiles `pattern`; `field` names the argument in the error.
    pub(crate) fn new(field: &str, pattern: &str) -> Result<PathGlob, ToolError> {
        // `./src/*.rs` means the same as `src/*.rs` to anyone typing it.
        let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
        let glob = GlobBuilder::new(pattern)
            // `*` stays within one path component; `**` crosses them.
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| {
                ToolError::InvalidArguments(format!("`{field}` is not a valid glob: {e}"))
            })?;
        Ok(PathGlob {
            matcher: glob.compile_matcher(),
            name_only: !pattern.contains('/'),
        })
    }

    /// True when `relative` (a path relative to the workspace root) matches.
    pub(crate) fn is_match(&self, relative: &Path) -> bool {
        if self.name_only {
            relative
                .file_name()
                .is_some_and(|name| self.matcher.is_match(name))
        } else {
            self.matcher.is_match(relative)
        }
    }
}

pub(crate) fn find(
    workspace_dir: &Path,
    arguments: &FindArguments,
    cancel: &CancelFlag,
) -> Result<String, ToolError> {
    let max_results = count_in_range(
        "max_results",
        arguments.max_results,
        FIND_DEFAULT_MAX_RESULTS,
        FIND_MAX_RESULTS,
    )?;
    let glob = PathGlob::new("pattern", &arguments.pattern)?;
    let workspace = Workspace::new(workspace_dir)?;
    let start = workspace.resolve(arguments.path.as_deref().unwrap_or("."))?;

    // The first `max_results` paths in sorted order, kept in a max-heap so a
    // huge tree costs memory for the kept paths only.
    let mut kept: BinaryHeap<String> = BinaryHeap::with_capacity(max_results + 1);
    let mut matched: usize = 0;
    let mut unreadable: usize = 0;
    let mut walk = workspace.walk(&start);
    for entry in walk.by_ref() {
        if cancel.is_raised() {
            return Err(CancelFlag::error());
        }
        let Ok(entry) = entry else {
            unreadable += 1;
            continue;
        };
        if entry.kind() != EntryKind::File {
            continue;
        }
        let relative = entry.relative();
        if !glob.is_match(relative) {
            continue;
        }
        matched += 1;
        kept.push(relative.to_string_lossy().into_owned());
        if kept.len() > max_results {
            kept.pop();
        }
    }

    let under = workspace.display(&start);
    let mut text = String::new();
    if matched == 0 {
        text.push_str(&format!(
            "no files match `{}` under {under} (hidden and ignored files are skipped)\n",
            arguments.pattern
        ));
    }
    let shown = kept.len();
    for path in kept.into_sorted_vec() {
        text.push_str(&path);
        text.push('\n');
    }
    if matched > shown {
        text.push_str(&format!(
            "... and {} more (raise max_results, at most {FIND_MAX_RESULTS}, or narrow the pattern or path)\n",
            matched - shown
        ));
    }
    if unreadable > 0 {
        text.push_str(&format!(
            "({unreadable} entries under {under} could not be read)\n"
        ));
    }
    text.extend(walk.skipped_note());
    Ok(text)
}

#[cfg(test)]
#[path = "find_tests.rs"]
mod tests;
