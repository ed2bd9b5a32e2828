//! The tasks file: one JSON object per line (`id`, `task`, and optional
//! `agent`, `provider`, `model`, `limits`, `outputSchema`, `isolation`, `apply`), read whole and
//! checked before anything runs.
//!
//! Every problem (a line that is not UTF-8 or not JSON, a missing `task`, an
//! unknown key or limit, a duplicate id) is collected with its 1-based line number and
//! the file is refused as a whole: a batch never starts half-valid, so each
//! shard of a scaled-out batch sees the same verdict. Blank lines are
//! skipped. It never reads the disk itself; the caller hands it the text.

use std::collections::HashMap;
use std::fmt;

use serde::Deserialize;
use serde_json::Value;

use crate::config::LimitSet;
use crate::request::RequestPatch;

/// One task of the file, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskLine {
    /// 1-based line number in the tasks file.
    pub line: usize,
    /// The task's id, unique in the file.
    pub id: String,
    /// The task text.
    pub task: String,
    /// Agent name; `None` takes the batch's default.
    pub agent: Option<String>,
    /// Provider name or kind; `None` takes the batch's default.
    pub provider: Option<String>,
    /// Model id; `None` takes the batch's default.
    pub model: Option<String>,
    /// Limits for this task only, over the batch's flags.
    pub limits: LimitSet,
    /// The output schema as JSON text, when the line has one.
    pub output_schema_json: Option<String>,
    /// `isolation`: how this task's tools see the workspace.
    pub isolation: Option<crate::layer::WorkspaceIsolation>,
    /// `apply`: when this task's changes are applied.
    pub apply: Option<crate::layer::ApplyMode>,
}

impl TaskLine {
    /// What this line changes of the batch's settings: agent, provider,
    /// model, limits, output schema, and the task itself.
    pub fn patch(&self) -> RequestPatch {
        RequestPatch {
            agent: self.agent.clone(),
            provider: self.provider.clone(),
            model: self.model.clone(),
            limits: self.limits.clone(),
            task: Some(self.task.clone()),
            output_schema_json: self.output_schema_json.clone(),
            isolation: self.isolation,
            apply: self.apply,
            ..RequestPatch::default()
        }
    }
}

/// One line as written; unknown keys are refused so a typo (`modle`) is
/// not silently run with the default.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawTask {
    id: String,
    task: String,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    limits: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    output_schema: Option<Value>,
    #[serde(default)]
    isolation: Option<String>,
    #[serde(default)]
    apply: Option<String>,
}

/// A problem on one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineProblem {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// The tasks file is refused: every problem found, in line order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct TaskFileError {
    /// The problems (at least one).
    pub problems: Vec<LineProblem>,
}

impl fmt::Display for TaskFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the tasks file has {} bad line(s); nothing was run:",
            self.problems.len()
        )?;
        for p in &self.problems {
            write!(f, "\n  line {}: {}", p.line, p.message)?;
        }
        Ok(())
    }
}

/// Reads every task of `text`, or every problem of it.
pub fn parse_tasks(text: &str) -> Result<Vec<TaskLine>, TaskFileError> {
    parse_task_bytes(text.as_bytes())
}

/// [`parse_tasks`] on the file's bytes: a line that is not UTF-8 is one
/// more problem with its line number, not a refusal of the whole file
/// without one.
pub fn parse_task_bytes(bytes: &[u8]) -> Result<Vec<TaskLine>, TaskFileError> {
    let (tasks, problems) = read_task_bytes(bytes);
    if problems.is_empty() {
        Ok(tasks)
    } else {
        Err(TaskFileError { problems })
    }
}

/// The good lines of the file's bytes and the problems of the others, so a
/// caller that checks more of each line (its agent, its provider) can
/// report every problem of the file at once.
pub fn read_task_bytes(bytes: &[u8]) -> (Vec<TaskLine>, Vec<LineProblem>) {
    let mut tasks = Vec::new();
    let mut problems = Vec::new();
    let mut first_line_of: HashMap<String, usize> = HashMap::new();
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    for (index, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        let line = index + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let raw = match std::str::from_utf8(raw) {
            Ok(raw) => raw,
            Err(e) => {
                problems.push(LineProblem {
                    line,
                    message: format!(
                        "not UTF-8 (a bad byte at column {}); save the file as UTF-8",
                        e.valid_up_to() + 1
                    ),
                });
                continue;
            }
        };
        if raw.trim().is_empty() {
            continue;
        }
        match parse_line(line, raw) {
            Ok(task) => match first_line_of.get(&task.id) {
                Some(first) => problems.push(LineProblem {
                    line,
                    message: format!(
                        "duplicate id `{}` (first on line {first}); ids must be unique",
                        task.id
                    ),
                }),
                None => {
                    first_line_of.insert(task.id.clone(), line);
                    tasks.push(task);
                }
            },
            Err(message) => problems.push(LineProblem { line, message }),
        }
    }
    (tasks, problems)
}

fn parse_line(line: usize, raw: &str) -> Result<TaskLine, String> {
    let task: RawTask = serde_json::from_str(raw).map_err(|e| {
        format!("{e}; a task line is a JSON object like {{\"id\": \"t1\", \"task\": \"...\"}}")
    })?;
    if task.id.trim().is_empty() {
        return Err("`id` is empty; give every task a unique, non-empty id".to_owned());
    }
    if task.task.trim().is_empty() {
        return Err(format!("task `{}`: `task` is empty", task.id));
    }
    let limits = LimitSet::from_json(task.limits.unwrap_or_default())
        .map_err(|m| format!("task `{}`: {m}", task.id))?;
    let output_schema_json = match task.output_schema {
        None => None,
        Some(schema @ Value::Object(_)) => Some(schema.to_string()),
        Some(_) => {
            return Err(format!(
                "task `{}`: `outputSchema` must be a JSON Schema object, inline",
                task.id
            ));
        }
    };
    let isolation = task
        .isolation
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|m| format!("task `{}`: {m}", task.id))?;
    let apply = task
        .apply
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|m| format!("task `{}`: {m}", task.id))?;
    Ok(TaskLine {
        line,
        id: task.id,
        task: task.task,
        agent: task.agent,
        provider: task.provider,
        model: task.model,
        limits,
        output_schema_json,
        isolation,
        apply,
    })
}

#[cfg(test)]
#[path = "task_tests.rs"]
mod tests;
