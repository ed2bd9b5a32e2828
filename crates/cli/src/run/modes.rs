//! `subagent run --parallel` and `--chain`: which tasks a call has (from
//! repeated `--task` and `--tasks FILE`) and which [`RunMode`], checked
//! before anything starts, and handed to the supervisor's one dispatcher
//! ([`Supervisor::execute`]).
//!
//! In: the flags. Out: a [`TaskPlan`] and, once run, one result object.
//! Flags that cannot work together are a usage error (exit 2) here, never a
//! half-started call.

use std::path::Path;

use anyhow::{Context, Result, bail};
use subagent_protocol::RunMode;
use subagent_protocol::result::SubagentResult;
use subagent_supervisor::run::{RunPlan, concurrency_for};
use subagent_supervisor::{RunRequest, Supervisor};
use tokio_util::sync::CancellationToken;

/// Which tasks one `subagent run` call has and how it runs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TaskPlan {
    /// Single (exactly one task), parallel or chain.
    pub(super) mode: RunMode,
    /// The tasks, in order.
    pub(super) tasks: Vec<String>,
    /// Parallel only: children running at once.
    pub(super) concurrency: Option<usize>,
}

impl TaskPlan {
    /// One task, one child.
    pub(super) fn single(task: String) -> Self {
        Self {
            mode: RunMode::Single,
            tasks: vec![task],
            concurrency: None,
        }
    }
}

/// The flags that choose the plan, as parsed.
pub(super) struct ModeFlags<'a> {
    pub(super) tasks: &'a [String],
    pub(super) tasks_file: Option<&'a Path>,
    pub(super) parallel: bool,
    pub(super) chain: bool,
    pub(super) concurrency: Option<usize>,
    /// The most children the supervisor runs at once.
    pub(super) max_concurrent: usize,
}

/// Decides the plan, reading `--tasks FILE` when given.
pub(super) fn plan(flags: &ModeFlags<'_>) -> Result<TaskPlan> {
    let mut tasks = flags.tasks.to_vec();
    if let Some(path) = flags.tasks_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--tasks {}: cannot read the file", path.display()))?;
        tasks.extend(tasks_from_file(&text));
    }
    plan_from(tasks, flags)
}

/// One task per non-empty line; surrounding blanks are not part of a task.
pub(super) fn tasks_from_file(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The pure part of [`plan`].
pub(super) fn plan_from(tasks: Vec<String>, flags: &ModeFlags<'_>) -> Result<TaskPlan> {
    if tasks.is_empty() {
        bail!("no task: pass --task TEXT (or --tasks FILE with one task per line)");
    }
    if flags.concurrency.is_some() && !flags.parallel {
        bail!("--concurrency applies to --parallel only");
    }
    if flags.parallel {
        // An explicit --concurrency above the limit is refused; the default
        // is lowered to it (the others wait).
        let concurrency = match concurrency_for(flags.concurrency, flags.max_concurrent) {
            Ok(n) => n,
            Err(message) => bail!(
                "--concurrency {}: {message}",
                flags.concurrency.unwrap_or_default()
            ),
        };
        return Ok(TaskPlan {
            mode: RunMode::Parallel,
            tasks,
            concurrency: Some(concurrency),
        });
    }
    if flags.chain {
        return Ok(TaskPlan {
            mode: RunMode::Chain,
            tasks,
            concurrency: None,
        });
    }
    let count = tasks.len();
    let mut tasks = tasks.into_iter();
    match (tasks.next(), count) {
        (Some(task), 1) => Ok(TaskPlan::single(task)),
        _ => bail!(
            "{count} tasks were given: add --parallel to run them at once or --chain to run them one after another"
        ),
    }
}

/// Runs the plan, every child built from `template` with its own task.
pub(super) async fn execute(
    supervisor: &Supervisor,
    plan: TaskPlan,
    template: RunRequest,
    cancel: CancellationToken,
) -> SubagentResult {
    let plan =
        RunPlan::for_tasks(plan.mode, &template, plan.tasks).with_concurrency(plan.concurrency);
    supervisor.execute(plan, cancel).await
}

#[cfg(test)]
#[path = "modes_tests.rs"]
mod tests;
