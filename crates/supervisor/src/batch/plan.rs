//! A batch's plan: every task line's settings (the batch's own, patched by
//! the line's agent, provider, model and limits: [`TaskLine::patch`])
//! resolved and checked before anything runs, then the pending tasks as
//! requests.
//!
//! Settings are prepared once per distinct set of overrides (most batches
//! have one), since preparing reads the config and agent files. Every line
//! whose settings do not resolve (an unknown provider, an unknown or
//! disabled agent) is reported with its line number, all of them at once,
//! and the batch is refused: it never starts half-valid.

use std::collections::HashMap;

use super::TaskLine;
use super::task::{LineProblem, TaskFileError};
use crate::config::RunOverrides;
use crate::error_chain::error_chain;
use crate::prepare::{
    PrepareSettings, PrepareWarning, Prepared, agent_tools, prepare as prepare_run,
};
use crate::run::{Asked, Ceilings};
use crate::{RunRequest, SupervisorConfig};

/// Every task's settings, checked; built by [`check_settings`].
pub struct CheckedSettings {
    /// The prepared request of each distinct set of overrides.
    templates: HashMap<RunOverrides, RunRequest>,
    base: RunOverrides,
    /// The first prepared config; `None` for an empty tasks file.
    config: Option<SupervisorConfig>,
}

/// The pending tasks as requests, and the supervisor config.
pub struct BatchPlan {
    /// Each pending task's id and request, in file order.
    pub requests: Vec<(String, RunRequest)>,
    /// `None` when nothing is left to run.
    pub config: Option<SupervisorConfig>,
}

/// Resolves every line's settings; refuses with every bad line's number,
/// those of `problems` (found earlier, in lines that did not parse) too.
/// With `ceilings` (`--ceilings-from-flags`), a line that asks above the
/// flags is one of those bad lines.
pub fn check_settings(
    settings: &PrepareSettings,
    base: &RunOverrides,
    tasks: &[TaskLine],
    mut problems: Vec<LineProblem>,
    ceilings: Option<&Ceilings>,
    warn: &dyn Fn(PrepareWarning),
) -> Result<CheckedSettings, TaskFileError> {
    let base = base.clone();
    // Each distinct set of overrides, prepared once: its request, or why it
    // does not resolve (so every line that shares it is named).
    let mut prepared: HashMap<RunOverrides, Result<RunRequest, String>> = HashMap::new();
    let mut config: Option<SupervisorConfig> = None;
    for task in tasks {
        let overrides = task_overrides(&base, task);
        let outcome = prepared
            .entry(overrides.clone())
            .or_insert_with(|| prepare(settings, &overrides, task, ceilings, warn, &mut config));
        if let Err(why) = outcome {
            problems.push(LineProblem {
                line: task.line,
                message: format!("task `{}`: {why}", task.id),
            });
        }
    }
    if !problems.is_empty() {
        problems.sort_by_key(|p| p.line);
        return Err(TaskFileError { problems });
    }
    let templates = prepared
        .into_iter()
        .filter_map(|(key, outcome)| Some((key, outcome.ok()?)))
        .collect();
    Ok(CheckedSettings {
        templates,
        base,
        config,
    })
}

/// One set of overrides (those of `task`) as a request whose agent exists
/// and is enabled, and, with `ceilings`, asks nothing above them; the first
/// config prepared is kept in `config`.
fn prepare(
    settings: &PrepareSettings,
    overrides: &RunOverrides,
    task: &TaskLine,
    ceilings: Option<&Ceilings>,
    warn: &dyn Fn(PrepareWarning),
    config: &mut Option<SupervisorConfig>,
) -> Result<RunRequest, String> {
    let Prepared {
        mut request,
        config: prepared,
        ..
    } = prepare_run(settings, overrides, warn).map_err(|e| error_chain(&e))?;
    if let Some(ceilings) = ceilings {
        let asked = Asked {
            limits: &task.limits,
            tools: settings.tools.is_some(),
            agent_tools: &agent_tools(&prepared, &request.agent),
        };
        ceilings
            .admit(&mut request, &asked)
            .map_err(|e| e.to_string())?;
    }
    let config = config.get_or_insert(prepared);
    match config.catalog.get(&request.agent) {
        None => Err(config.catalog.unknown_message(&request.agent)),
        Some(agent) if agent.disabled => Err(crate::agents::AgentCatalog::disabled_message(agent)),
        Some(_) => Ok(request),
    }
}

impl CheckedSettings {
    /// The supervisor config the tasks run under; `None` for a tasks file
    /// without tasks.
    pub fn config(&self) -> Option<&SupervisorConfig> {
        self.config.as_ref()
    }
}

/// The requests of `pending` (tasks [`check_settings`] passed).
pub fn plan(checked: CheckedSettings, pending: Vec<TaskLine>) -> BatchPlan {
    let CheckedSettings {
        templates,
        base,
        config,
    } = checked;
    let mut requests = Vec::with_capacity(pending.len());
    for task in pending {
        let Some(template) = templates.get(&task_overrides(&base, &task)) else {
            continue;
        };
        let mut request = template.clone();
        task.patch().apply_to(&mut request);
        requests.push((task.id, request));
    }
    let config = (!requests.is_empty()).then_some(config).flatten();
    BatchPlan { requests, config }
}

/// `base` patched by `task`'s line.
pub fn task_overrides(base: &RunOverrides, task: &TaskLine) -> RunOverrides {
    task.patch().apply(base)
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
