//! The sentence that tells a model which tools it has, written per run from
//! the tools the run really has: a caller may give fewer (`--tools
//! bash_read`), and a model told about python_execute it does not have
//! calls it anyway and burns a turn on the refusal.
//!
//! Pure text; it knows no agent.

use subagent_protocol::tool_names::{
    BASH, BASH_FIND, BASH_READ, BASH_RIPGREP, EDIT_FILE, LIST_DIR, MULTI_EDIT, PYTHON_EXECUTE,
    READ_ONLY_TOOLS, SCRAPE_WEBPAGE, SEARCH_WEB, SUBAGENT, TODO_WRITE, WRITE_FILE, WRITING_TOOLS,
};

/// What each tool does, in the words a prompt uses.
const TOOL_PURPOSES: &[(&str, &str)] = &[
    (BASH_FIND, "bash_find lists files by glob"),
    (BASH_RIPGREP, "bash_ripgrep searches file contents"),
    (BASH_READ, "bash_read reads a file with line numbers"),
    (LIST_DIR, "list_dir lists a directory"),
    (WRITE_FILE, "write_file writes a whole file"),
    (EDIT_FILE, "edit_file replaces exact text in a file"),
    (
        MULTI_EDIT,
        "multi_edit makes several such replacements at once",
    ),
    (BASH, "bash runs a shell command in a sandbox"),
    (TODO_WRITE, "todo_write keeps your task list"),
    (PYTHON_EXECUTE, "python_execute runs Python in a sandbox"),
    (SEARCH_WEB, "search_web searches the web"),
    (SCRAPE_WEBPAGE, "scrape_webpage reads one web page"),
    (
        SUBAGENT,
        "subagent hands a self-contained task to another subagent",
    ),
];

/// The sentence naming `tools`, in their order, and nothing else.
pub(super) fn tool_guide(tools: &[String]) -> String {
    if tools.is_empty() {
        return "You have no tools: answer from the task alone.".to_owned();
    }
    let described: Vec<String> = tools
        .iter()
        .map(|tool| {
            TOOL_PURPOSES
                .iter()
                .find(|(name, _)| name == tool)
                .map_or_else(|| tool.clone(), |(_, purpose)| (*purpose).to_owned())
        })
        .collect();
    let reads_files = tools
        .iter()
        .any(|t| READ_ONLY_TOOLS.contains(&t.as_str()) || WRITING_TOOLS.contains(&t.as_str()));
    let mut guide = format!("Your tools: {}.", described.join(", "));
    if reads_files {
        guide.push_str(" Paths are relative to the workspace.");
    }
    guide
}
