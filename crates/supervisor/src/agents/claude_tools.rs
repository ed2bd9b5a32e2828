//! Which Claude Code tools have an equivalent here: read by the agent-file
//! parser (to map a file's tools) and by the warnings (to say what is
//! mapped). Its own module so that neither imports the other.

use subagent_protocol::tool_names::{
    BASH_FIND, BASH_READ, BASH_RIPGREP, SCRAPE_WEBPAGE, SEARCH_WEB,
};

/// Claude Code tool -> the tool here that does the same, read-only.
/// Everything else (Bash, Edit, Write, ...) has no equivalent and is
/// dropped with a warning. WebFetch answers a prompt about a page where
/// scrape_webpage returns the page, which the agent's own model then reads.
pub const CLAUDE_TOOL_MAP: &[(&str, &str)] = &[
    ("Read", BASH_READ),
    ("Grep", BASH_RIPGREP),
    ("Glob", BASH_FIND),
    ("WebSearch", SEARCH_WEB),
    ("WebFetch", SCRAPE_WEBPAGE),
];
