//! Which Claude Code tools have an equivalent here: read by the agent-file
//! parser (to map a file's tools) and by the warnings (to say what is
//! mapped). Its own module so that neither imports the other.

use subagent_protocol::tool_names::{
    BASH, BASH_FIND, BASH_READ, BASH_RIPGREP, EDIT_FILE, LIST_DIR, MULTI_EDIT, SCRAPE_WEBPAGE,
    SEARCH_WEB, SUBAGENT, TODO_WRITE, WRITE_FILE,
};

/// Claude Code tool -> the tool here that does the same job, with the same
/// parameters where Claude Code documents them. WebFetch answers a prompt
/// about a page where scrape_webpage returns the page, which the agent's
/// own model then reads. Task is the `subagent` tool, offered only below
/// the depth limit and never with more than the parent has. Everything
/// else (NotebookEdit, ...) has no equivalent and is dropped with a
/// warning.
pub const CLAUDE_TOOL_MAP: &[(&str, &str)] = &[
    ("Read", BASH_READ),
    ("Grep", BASH_RIPGREP),
    ("Glob", BASH_FIND),
    ("LS", LIST_DIR),
    ("Write", WRITE_FILE),
    ("Edit", EDIT_FILE),
    ("MultiEdit", MULTI_EDIT),
    ("Bash", BASH),
    ("TodoWrite", TODO_WRITE),
    ("Task", SUBAGENT),
    ("WebSearch", SEARCH_WEB),
    ("WebFetch", SCRAPE_WEBPAGE),
];
