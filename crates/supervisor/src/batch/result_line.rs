//! One line of a results file: what a finished task's result object comes
//! to (`schemas/batch-line.schema.json`), and how the summary counts it.
//!
//! Pure: it builds lines; writing and reading them is [`super::results`]'.

use serde::{Deserialize, Serialize};
use subagent_protocol::result::{ContentItem, SubagentResult};
use subagent_protocol::{ErrorCode, Usage};

/// How a task ended, as the summary counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskStatus {
    /// It succeeded.
    Ok,
    /// It failed (any error but a timeout).
    Failed,
    /// Its wall or idle timeout fired.
    Timeout,
}

/// The exit status `subagent run` has for a result's error code (`None`:
/// success). The binary owns the numbers; the library only records them.
pub type CliExitOf = fn(Option<ErrorCode>) -> i32;

/// One line of the results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultLine {
    /// The task's id.
    pub id: String,
    /// ok, failed or timeout.
    pub status: TaskStatus,
    /// What `subagent run` would have exited with for this task: the CLI's
    /// exit (the [`CliExitOf`] the batch was given), not the worker's exit status, which is a
    /// result object's `exitCode`. Written `cliExit`; files written before
    /// the rename say `exitCode`, still read (docs/decisions.md, "Format
    /// changes").
    #[serde(alias = "exitCode")]
    pub cli_exit: i32,
    /// The result's error code, when it failed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error_code: Option<ErrorCode>,
    /// The result's error message, when it failed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// The agent that ran.
    pub agent: String,
    /// The model that answered, when one did.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub model: Option<String>,
    /// The answer's text (sanitized, cut to the return limit, as the result
    /// object carries it).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub output: Option<String>,
    /// Where the full text is when `output` was cut: the result's
    /// `truncated.fullOutputPath`, so a reader of the line alone can find it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub full_output_path: Option<String>,
    /// The structured output, when the task had an output schema.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub structured_output: Option<serde_json::Value>,
    /// Tokens, cost and turns.
    pub usage: Usage,
    /// Wall time of the task in this batch, ms.
    pub duration_ms: u64,
    /// The task's session file, when a worker started.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub session_file: Option<String>,
    /// Complete model turns of an earlier, interrupted run of the task this
    /// run continued from.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub continued_from: Option<u32>,
    /// What the task changed in the workspace and what was applied (a
    /// task run with a copy-on-write layer).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub changes: Option<subagent_protocol::changes::Changes>,
    /// The model's task list, as the result's `todos`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub todos: Option<Vec<subagent_protocol::result::TodoItem>>,
}

impl ResultLine {
    /// The line for task `id` from its result object; `cli_exit` gives the
    /// exit status `subagent run` has for its error code.
    pub fn from_result(
        id: &str,
        agent: &str,
        result: &SubagentResult,
        duration_ms: u64,
        cli_exit: CliExitOf,
    ) -> Self {
        let code = result.details.error.as_ref().map(|e| e.code);
        let child = result.details.results.first();
        let content_text = result.content.iter().find_map(|item| {
            let ContentItem::Text { text } = item;
            (!text.is_empty()).then(|| text.clone())
        });
        Self {
            id: id.to_owned(),
            status: match code {
                None => TaskStatus::Ok,
                Some(ErrorCode::SubagentTimeout) => TaskStatus::Timeout,
                Some(_) => TaskStatus::Failed,
            },
            cli_exit: cli_exit(code),
            error_code: code,
            error: result.details.error.as_ref().map(|e| e.message.clone()),
            agent: child.map_or_else(|| agent.to_owned(), |c| c.agent.clone()),
            model: child.and_then(|c| c.model.clone()),
            output: child.and_then(|c| c.output.clone()).or(content_text),
            full_output_path: child
                .and_then(|c| c.truncated.as_ref())
                .and_then(|t| t.full_output_path.clone()),
            structured_output: child.and_then(|c| c.structured_output.clone()),
            usage: child.map(|c| c.usage).unwrap_or_default(),
            duration_ms,
            session_file: child.and_then(|c| c.session_file.clone()),
            continued_from: child.and_then(|c| c.continued_from),
            changes: child.and_then(|c| c.changes.clone()),
            todos: child.and_then(|c| c.todos.clone()),
        }
    }
}
