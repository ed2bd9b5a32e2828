//! `todo_write`: the model's task list, with Claude Code's `TodoWrite`
//! parameters (`todos`: each `content`, `status` and `activeForm`; an `id`
//! and `priority` are accepted as Claude Code's older form sends them).
//!
//! Each call replaces the whole list. The list is kept where every tool
//! call is kept: the call and its result (the list as the model reads it
//! back) are lines of the run's session file, so `subagent sessions show`
//! shows them. The supervisor reads the run's list from the same call and
//! result (a list this tool refuses never counts) for the status line and
//! the result's `todos`. This tool touches nothing: no file, no process.

use serde::Deserialize;
pub use subagent_protocol::result::TodoStatus;
use subagent_protocol::tool_names::TODO_WRITE;

use crate::arguments::parse_arguments;
use crate::tool::{Tool, ToolContext, ToolError, ToolFuture, ToolOutput};

/// Most items one list holds.
pub const MAX_TODOS: usize = 100;

/// Longest text of one item, bytes.
const MAX_TODO_BYTES: usize = 2_000;

/// The `todo_write` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct TodoWrite;

/// One item of the list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Todo {
    /// What is to be done, imperative ("Run the tests").
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
    /// The same, as it is being done ("Running the tests").
    #[serde(rename = "activeForm", default)]
    pub active_form: Option<String>,
    /// Claude Code's older form: accepted, not used.
    #[serde(default)]
    pub id: Option<serde_json::Value>,
    /// Claude Code's older form: accepted, not used.
    #[serde(default)]
    pub priority: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Arguments {
    todos: Vec<Todo>,
}

impl Tool for TodoWrite {
    fn name(&self) -> &str {
        TODO_WRITE
    }

    fn description(&self) -> &str {
        "Keep your task list for this run: pass the whole list each time (it replaces the last). \
         Each item has content (imperative: \"Run the tests\"), status (pending, in_progress, \
         completed; one in_progress at a time) and activeForm (\"Running the tests\"). Use it \
         for tasks of three steps or more; it changes nothing in the workspace."
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "maxItems": MAX_TODOS,
                    "description": "The whole task list.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "minLength": 1},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                            "activeForm": {"type": "string", "minLength": 1}
                        },
                        "required": ["content", "status", "activeForm"]
                    }
                }
            },
            "required": ["todos"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, arguments: serde_json::Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let arguments: Arguments = parse_arguments(arguments)?;
            check(&arguments.todos)?;
            Ok(ToolOutput::text(render(&arguments.todos)))
        })
    }
}

fn check(todos: &[Todo]) -> Result<(), ToolError> {
    if todos.len() > MAX_TODOS {
        return Err(ToolError::InvalidArguments(format!(
            "todos holds {} items, more than the {MAX_TODOS} accepted; group small steps",
            todos.len()
        )));
    }
    for (i, todo) in todos.iter().enumerate() {
        let texts = [Some(&todo.content), todo.active_form.as_ref()];
        if todo.content.trim().is_empty() {
            return Err(ToolError::InvalidArguments(format!(
                "todos[{i}].content is empty; say what is to be done"
            )));
        }
        if texts.iter().flatten().any(|t| t.len() > MAX_TODO_BYTES) {
            return Err(ToolError::InvalidArguments(format!(
                "todos[{i}] is longer than {MAX_TODO_BYTES} bytes; keep items short"
            )));
        }
    }
    let in_progress = todos
        .iter()
        .filter(|t| t.status == TodoStatus::InProgress)
        .count();
    if in_progress > 1 {
        return Err(ToolError::InvalidArguments(format!(
            "{in_progress} items are in_progress; keep exactly one in_progress at a time"
        )));
    }
    Ok(())
}

/// The list as the model reads it back (and `sessions show` prints it).
pub fn render(todos: &[Todo]) -> String {
    if todos.is_empty() {
        return "Task list cleared.\n".to_owned();
    }
    let done = todos
        .iter()
        .filter(|t| t.status == TodoStatus::Completed)
        .count();
    let mut out = format!("Task list ({done}/{} done):\n", todos.len());
    for todo in todos {
        let mark = match todo.status {
            TodoStatus::Pending => "[ ]",
            TodoStatus::InProgress => "[~]",
            TodoStatus::Completed => "[x]",
        };
        out.push_str(&format!("{mark} {}", todo.content.trim()));
        if todo.status == TodoStatus::InProgress
            && let Some(active) = &todo.active_form
        {
            out.push_str(&format!(" ({})", active.trim()));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
#[path = "todo_tests.rs"]
mod tests;
