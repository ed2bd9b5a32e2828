//! The tools a subagent may call, and the pieces every tool call goes through.
//!
//! - [`Tool`]: one callable tool (name, description, JSON-Schema parameters,
//!   an async `call`), run with a [`ToolContext`] that says where it may work,
//!   how long it may take and how much output it may produce.
//! - [`ToolRegistry`]: the tools this build ships, and the per-agent subset a
//!   child is given ([`ToolRegistry::subset`] refuses unknown names).
//! - [`run_tool`]: parses the model's arguments, enforces the timeout and caps
//!   the output shown to the model, so every tool fails the same readable way.
//! - [`report_back`]: the schema-checked structured-output helper. The worker
//!   offers it as the `report_back` tool; the supervisor compiles the same
//!   schema up front to refuse a bad one before anything is spawned.
//! - [`cap_output`]: head + tail truncation, UTF-8 safe.
//! - The file tools, on ripgrep's library crates: [`BashFind`] (`bash_find`,
//!   files by glob), [`BashRipgrep`] (`bash_ripgrep`, regex search) and
//!   [`BashRead`] (`bash_read`, numbered lines or a directory listing).
//!   Every path they are given goes through [`Workspace`], which refuses
//!   anything outside the workspace root and opens beneath the root's fd;
//!   their reading runs on a thread Landlocked to the workspace.
//! - The tools that act, with Claude Code's parameters: [`Bash`] (`bash`,
//!   a shell command in the tool sandbox, as `python_execute` runs Python;
//!   both through `process`), [`WriteFile`] (`write_file`), [`EditFile`]
//!   (`edit_file`), [`MultiEdit`] (`multi_edit`), which write beneath the
//!   workspace fd (`write_target`) on a Landlocked thread, and [`ListDir`]
//!   (`list_dir`); [`TodoWrite`] (`todo_write`) keeps the model's task list.
//! - The web tools: [`SearchWeb`] (`search_web`, a configured SearXNG or
//!   Brave API) and [`ScrapeWebpage`] (`scrape_webpage`, one page as
//!   Markdown, behind the SSRF policy [`AddressPolicy`]).
//!
//! This crate never talks to the supervisor and never decides when a task
//! ends: it runs one call and says what happened. It must not print to stdout
//! (the worker's stdout is a captured pipe).

#![forbid(unsafe_code)]

mod arguments;
pub mod bash;
mod beneath;
mod blocking;
mod confined;
pub mod disk;
pub mod edit;
pub mod edit_text;
pub mod find;
mod git_call;
pub mod git_guard;
mod ignore_rules;
pub mod list_dir;
pub mod mcp;
pub mod network;
pub mod output_cap;
pub mod pin;
mod process;
pub mod python;
pub mod read;
pub mod registry;
/// Structured output: re-exported from its own crate (the supervisor uses
/// it without the tools).
pub use subagent_report_back as report_back;
pub mod ripgrep;
pub mod run;
pub mod todo;
pub mod tool;
mod walk;
pub mod web;
pub mod web_policy;
pub mod workspace;
pub mod write;
mod write_target;

#[cfg(test)]
mod test_tree;

pub use bash::Bash;
pub use edit::{EditFile, MultiEdit};
pub use find::BashFind;
pub use list_dir::ListDir;
pub use output_cap::{Capped, cap_output, omission_marker};
pub use pin::WorkspacePin;
pub use python::PythonExecute;
pub use read::BashRead;
pub use registry::{RegisterError, ToolRegistry, UnknownTools};
pub use report_back::{
    REPORT_BACK_DESCRIPTION, REPORT_BACK_INSTRUCTION, REPORT_BACK_TOOL_NAME, ReportBackSchema,
    SchemaError, Violation, describe_violations,
};
pub use ripgrep::BashRipgrep;
pub use run::{ToolCallOutput, run_tool};
pub use subagent_sandbox::{Interpreter, python_interpreter};
pub use todo::TodoWrite;
pub use tool::{
    Notices, OutputCaps, ProcessPolicy, PythonLater, Tool, ToolContext, ToolError, ToolFuture,
    ToolOutput,
};
pub use web::{
    AddressPolicy, PageFormat, PageRenderer, RENDER_PAGE_PROGRAM, ScrapeWebpage, SearchWeb,
    WebContext, html_to_readable,
};
pub use workspace::{Workspace, WorkspaceError};
pub use write::WriteFile;
