//! The run's task list as the model's `todo_write` calls left it, derived
//! from the tool-call and tool-result events the supervisor receives (the
//! worker protocol carries nothing of its own for it): the result's
//! `todos` and the status line's `tasks 1/3` are read from here.
//!
//! A call's list counts once its result arrives without an error: the tool
//! refuses a list it cannot take (two items in progress, too long), and a
//! refused list must not show. A resumed run starts from the list its
//! history left. The arguments come in masked for secrets, as the session
//! file holds them.
//!
//! The worker is not trusted to have checked anything: item counts and
//! text lengths are capped here again, and calls awaiting their result are
//! bounded, so a lying worker cannot grow this. Nothing here is made
//! terminal-safe: a display does that (JSON needs no such thing).

use serde::Deserialize;
use subagent_protocol::HistoryMessage;
use subagent_protocol::result::{TodoItem, TodoStatus};
use subagent_protocol::text::prefix_bytes;
use subagent_protocol::tool_names::TODO_WRITE;

/// Most items kept of one list (as many as `todo_write` accepts).
const MAX_ITEMS: usize = 100;

/// Most bytes kept of one item's text (as many as `todo_write` accepts).
const MAX_TEXT_BYTES: usize = 2_000;

/// Most `todo_write` calls awaiting their result at once; a model calls
/// one or two per turn, and the oldest is dropped past this.
const MAX_PENDING: usize = 8;

/// `todo_write`'s arguments; `id` and `priority` of Claude Code's older
/// form are ignored.
#[derive(Debug, Deserialize)]
struct Arguments {
    todos: Vec<TodoItem>,
}

/// The list so far and the calls whose result has not come.
#[derive(Debug, Default)]
pub(in crate::run) struct RunTodos {
    /// `todo_write` was among the run's tools.
    offered: bool,
    /// Lists of calls awaiting their result, by call id, oldest first.
    pending: Vec<(String, Vec<TodoItem>)>,
    /// The last accepted list.
    current: Vec<TodoItem>,
}

impl RunTodos {
    /// The list of a run offered `tools`, starting from what the
    /// conversation it continues (`history`, empty for a fresh run) left.
    pub fn new(tools: &[String], history: &[HistoryMessage]) -> Self {
        let mut todos = Self {
            offered: tools.iter().any(|t| t == TODO_WRITE),
            ..Self::default()
        };
        for message in history {
            match message {
                HistoryMessage::Assistant { tool_calls, .. } => {
                    for call in tool_calls {
                        todos.on_call(&call.id, &call.name, &call.arguments_json);
                    }
                }
                HistoryMessage::ToolResult {
                    call_id, is_error, ..
                } => {
                    todos.on_result(call_id, *is_error);
                }
                HistoryMessage::User { .. } => {}
            }
        }
        todos
    }

    /// A tool call of the model (arguments as JSON text, masked): kept
    /// until its result says whether the tool took the list.
    pub fn on_call(&mut self, call_id: &str, name: &str, arguments_json: &str) {
        if name != TODO_WRITE {
            return;
        }
        // Arguments the tool cannot parse are refused by it too: nothing
        // to wait for.
        let Ok(arguments) = serde_json::from_str::<Arguments>(arguments_json) else {
            return;
        };
        if self.pending.len() >= MAX_PENDING {
            self.pending.remove(0);
        }
        self.pending
            .push((call_id.to_owned(), bounded(arguments.todos)));
    }

    /// A tool result: when it answers a pending `todo_write` call without
    /// an error, its list becomes the run's. Returns the list when it did.
    pub fn on_result(&mut self, call_id: &str, is_error: bool) -> Option<&[TodoItem]> {
        let at = self.pending.iter().position(|(id, _)| id == call_id)?;
        let (_, list) = self.pending.remove(at);
        if is_error {
            return None;
        }
        self.current = list;
        Some(&self.current)
    }

    /// The last accepted list (empty before the first).
    pub fn current(&self) -> &[TodoItem] {
        &self.current
    }

    /// The result's `todos`: the last accepted list when the run was
    /// offered `todo_write` or wrote one, `None` otherwise.
    pub fn for_result(&self) -> Option<Vec<TodoItem>> {
        (self.offered || !self.current.is_empty()).then(|| self.current.clone())
    }
}

/// Items done and the item in progress's text, as a display shows them:
/// `(done, total, active)`, `active` the activeForm (else the content) of
/// the first item in progress.
pub fn summary(list: &[TodoItem]) -> (usize, usize, Option<&str>) {
    let done = list
        .iter()
        .filter(|t| t.status == TodoStatus::Completed)
        .count();
    let active = list
        .iter()
        .find(|t| t.status == TodoStatus::InProgress)
        .map(|t| t.active_form.as_deref().unwrap_or(&t.content));
    (done, list.len(), active)
}

/// `list` cut to [`MAX_ITEMS`] items of at most [`MAX_TEXT_BYTES`] each.
fn bounded(mut list: Vec<TodoItem>) -> Vec<TodoItem> {
    list.truncate(MAX_ITEMS);
    for item in &mut list {
        cut(&mut item.content);
        if let Some(active) = &mut item.active_form {
            cut(active);
        }
    }
    list
}

fn cut(text: &mut String) {
    let keep = prefix_bytes(text, MAX_TEXT_BYTES).len();
    text.truncate(keep);
}

#[cfg(test)]
#[path = "todos_tests.rs"]
mod tests;
