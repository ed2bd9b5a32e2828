//! The names of the tools the worker ships: part of the `call_subagent`
//! contract, so parents, agent files and tests can rely on them.
//!
//! The supervisor checks a requested tool subset against [`BUILTIN_TOOLS`]
//! before it spawns anything, without linking the tools themselves; the
//! worker's registry test asserts that it offers exactly these names.

/// Files under a path whose path matches a glob.
pub const BASH_FIND: &str = "bash_find";
/// Regex search over files, `path:line:text`.
pub const BASH_RIPGREP: &str = "bash_ripgrep";
/// A file or a line range, with line numbers; a directory's listing.
pub const BASH_READ: &str = "bash_read";
/// Python code run in a sandboxed tool process.
pub const PYTHON_EXECUTE: &str = "python_execute";
/// A `/bin/bash -c` command run in a sandboxed tool process (Claude Code's
/// `Bash`).
pub const BASH: &str = "bash";
/// A file created or overwritten whole (Claude Code's `Write`).
pub const WRITE_FILE: &str = "write_file";
/// One exact-string replacement in a file (Claude Code's `Edit`).
pub const EDIT_FILE: &str = "edit_file";
/// Several replacements in one file, all or none (Claude Code's
/// `MultiEdit`).
pub const MULTI_EDIT: &str = "multi_edit";
/// A directory's entries with kind and size (Claude Code's `LS`).
pub const LIST_DIR: &str = "list_dir";
/// The model's task list, kept with the run (Claude Code's `TodoWrite`).
pub const TODO_WRITE: &str = "todo_write";

/// A web search through the operator's configured search API.
pub const SEARCH_WEB: &str = "search_web";
/// One web page as Markdown or text, public addresses only by default.
pub const SCRAPE_WEBPAGE: &str = "scrape_webpage";

/// The nested-subagent tool: offered below the depth limit, run by the
/// supervisor (the worker only asks), so not part of [`BUILTIN_TOOLS`].
pub const SUBAGENT: &str = "subagent";

/// Every tool the worker's registry offers, in name order.
pub const BUILTIN_TOOLS: &[&str] = &[
    BASH,
    BASH_FIND,
    BASH_READ,
    BASH_RIPGREP,
    EDIT_FILE,
    LIST_DIR,
    MULTI_EDIT,
    PYTHON_EXECUTE,
    SCRAPE_WEBPAGE,
    SEARCH_WEB,
    TODO_WRITE,
    WRITE_FILE,
];

/// The tools that run a process in the tool sandbox: a run offered one
/// needs the tool sandbox (and the network stack when the network is on).
pub const PROCESS_TOOLS: &[&str] = &[BASH, PYTHON_EXECUTE];

/// The tools that can change the workspace: a run offered one works on a
/// copy-on-write view of it (`--isolation overlay`).
pub const WRITING_TOOLS: &[&str] = &[BASH, EDIT_FILE, MULTI_EDIT, PYTHON_EXECUTE, WRITE_FILE];

/// The tools that only read the workspace.
pub const READ_ONLY_TOOLS: &[&str] = &[BASH_FIND, BASH_READ, BASH_RIPGREP, LIST_DIR];

/// The tools that read the web (and never the workspace), in name order.
pub const WEB_TOOLS: &[&str] = &[SCRAPE_WEBPAGE, SEARCH_WEB];
