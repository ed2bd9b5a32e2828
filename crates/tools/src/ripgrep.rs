//! `bash_ripgrep`: regex search over the workspace's files, printed as
//! ripgrep prints it.
//!
//! In: a regex, an optional file or directory (default: the workspace root),
//! a file glob, case and literal switches, context lines and a match cap.
//! Out: `path:line:text` for a matching line, `path-line-text` for a context
//! line, `--` between groups that are not adjacent, root-relative paths,
//! files in path order; then how many matching lines were not shown. The
//! search runs on ripgrep's library crates in this process (no `rg` binary),
//! over the workspace's walk ([`Workspace::walk`]). Binary files (a NUL byte)
//! are skipped whole. Files are read incrementally, never whole into memory.
//! This tool never touches a path outside the workspace: each file is opened
//! beneath the fd of its directory in the walk ([`crate::walk`]) and read
//! only when the fd is a regular file.

use std::path::Path;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use serde::Deserialize;
use subagent_protocol::tool_names::BASH_RIPGREP;

use crate::arguments::{count_in_range, parse_arguments};
use crate::beneath::EntryKind;
use crate::blocking::CancelFlag;
use crate::confined::run_confined;
use crate::find::PathGlob;
use crate::tool::{Tool, ToolContext, ToolError, ToolFuture, ToolOutput};
use crate::workspace::Workspace;
use report::Report;

/// Matching lines shown when the call names no `max_matches`.
pub const RIPGREP_DEFAULT_MAX_MATCHES: usize = 200;
/// Largest `max_matches` a call may ask for.
pub const RIPGREP_MAX_MATCHES: usize = 2_000;
/// Largest `context` a call may ask for: more is reading, and bash_read
/// does that with line numbers a model can continue from.
pub const RIPGREP_MAX_CONTEXT: usize = 20;
/// Matching lines counted past the shown ones before the search stops: the
/// count tells the model how much it missed, and past this it only has to
/// know "a lot", not spend the call's time on an exact number.
const MAX_COUNTED_HIDDEN_MATCHES: u64 = 100_000;
/// Bytes of one line shown; the rest is replaced by a marker. Minified files
/// have megabyte lines that would fill the output cap with one match.
const MAX_LINE_BYTES: usize = 1_000;
/// Bytes the searcher may buffer for one line: a file with a longer line is
/// reported as unsearchable instead of being held in memory.
const SEARCH_HEAP_LIMIT_BYTES: usize = 64 * 1024 * 1024;

const DESCRIPTION: &str = "Search file contents with a regular expression (ripgrep's engine and \
syntax). Prints `path:line:text` for each matching line and, with `context`, \
`path-line-text` for the lines around it, with `--` between groups; paths are relative to the \
workspace root. Searches the files under `path` (a file or a directory; default: the \
workspace root), skipping files listed in .gitignore or .ignore, hidden files and directories, \
and binary files. `glob` limits the search to files whose path matches it (`*.py`, \
`src/**/*.rs`). Shows at most `max_matches` matching lines and says how many more there were.";

/// The `bash_ripgrep` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct BashRipgrep;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RipgrepArguments {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default)]
    ignore_case: Option<bool>,
    #[serde(default)]
    fixed_strings: Option<bool>,
    #[serde(default)]
    context: Option<u64>,
    #[serde(default)]
    max_matches: Option<u64>,
}

impl Tool for BashRipgrep {
    fn name(&self) -> &str {
        BASH_RIPGREP
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
                    "description": "Regular expression (Rust regex syntax, like ripgrep), matched against each line. With fixed_strings, a literal string."
                },
                "path": {
                    "type": "string",
                    "description": "File or directory to search, relative to the workspace root. Default: the workspace root."
                },
                "glob": {
                    "type": "string",
                    "description": "Only search files whose path matches this glob, e.g. `*.py` (file name, any directory) or `src/**/*.rs` (path relative to the workspace root)."
                },
                "ignore_case": {
                    "type": "boolean",
                    "description": "Match case-insensitively. Default: false."
                },
                "fixed_strings": {
                    "type": "boolean",
                    "description": "Treat pattern as a literal string, not a regex. Default: false."
                },
                "context": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": RIPGREP_MAX_CONTEXT,
                    "description": "Lines of context to show before and after each match. Default: 0."
                },
                "max_matches": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": RIPGREP_MAX_MATCHES,
                    "description": format!("Most matching lines to show (default {RIPGREP_DEFAULT_MAX_MATCHES}). The count of the rest is given.")
                }
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, arguments: serde_json::Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let arguments: RipgrepArguments = parse_arguments(arguments)?;
            let workspace_dir = ctx.workspace_dir.clone();
            let text = run_confined(ctx, move |cancel| {
                search(&workspace_dir, &arguments, cancel)
            })
            .await?;
            Ok(ToolOutput::text(text))
        })
    }
}

pub(crate) fn search(
    workspace_dir: &Path,
    arguments: &RipgrepArguments,
    cancel: &CancelFlag,
) -> Result<String, ToolError> {
    let max_matches = count_in_range(
        "max_matches",
        arguments.max_matches,
        RIPGREP_DEFAULT_MAX_MATCHES,
        RIPGREP_MAX_MATCHES,
    )?;
    let context = match arguments.context {
        None => 0,
        Some(n) => match usize::try_from(n) {
            Ok(n) if n <= RIPGREP_MAX_CONTEXT => n,
            _ => {
                return Err(ToolError::InvalidArguments(format!(
                    "context must be between 0 and {RIPGREP_MAX_CONTEXT}, got {n}"
                )));
            }
        },
    };
    let glob = arguments
        .glob
        .as_deref()
        .map(|g| PathGlob::new("glob", g))
        .transpose()?;
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(arguments.ignore_case.unwrap_or(false))
        .fixed_strings(arguments.fixed_strings.unwrap_or(false))
        .line_terminator(Some(b'\n'))
        .build(&arguments.pattern)
        .map_err(|e| ToolError::InvalidArguments(format!("`pattern` is not a valid regex: {e}")))?;
    let workspace = Workspace::new(workspace_dir)?;
    let start = workspace.resolve(arguments.path.as_deref().unwrap_or("."))?;

    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .before_context(context)
        .after_context(context)
        .binary_detection(BinaryDetection::quit(b'\0'))
        .heap_limit(Some(SEARCH_HEAP_LIMIT_BYTES))
        .build();
    let mut report = Report::new(max_matches, context > 0);
    let start_relative = start.strip_prefix(workspace.root()).unwrap_or(&start);
    let mut walk = workspace.walk(&start);
    for entry in walk.by_ref() {
        if cancel.is_raised() {
            return Err(CancelFlag::error());
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                report.unreadable(e.to_string());
                continue;
            }
        };
        if entry.kind() != EntryKind::File {
            continue;
        }
        let relative = entry.relative();
        // A file named as `path` is searched whatever the glob says, as
        // ripgrep searches files named on its command line.
        let filtered_out = glob
            .as_ref()
            .is_some_and(|glob| relative != start_relative && !glob.is_match(relative));
        if filtered_out {
            continue;
        }
        let display = relative.to_string_lossy();
        match entry.open_file() {
            Ok(Ok(file)) => {
                report.search_file(&mut searcher, &matcher, &file, &display, cancel);
            }
            // Listed as a file, and something else by the time it was
            // opened: swapped meanwhile, never read.
            Ok(Err(_)) => report.unreadable(format!("{display}: changed during the search")),
            Err(e) => report.unreadable(format!("{display}: {e}")),
        }
        if report.counting_stopped {
            break;
        }
    }
    if cancel.is_raised() {
        return Err(CancelFlag::error());
    }
    let mut text = report.finish(arguments, &workspace.display(&start));
    text.extend(walk.skipped_note());
    Ok(text)
}

#[path = "ripgrep_report.rs"]
mod report;

#[cfg(test)]
#[path = "ripgrep_tests.rs"]
mod tests;
