//! A request to start runs, as both servers read it: the `spawn` params of
//! `serve --stdio` and the arguments of the MCP `subagent` tool share one
//! shape ([`Spawn`]) and one parser ([`parse_spawn`]). Where the two wires
//! accept different things, their [`SpawnWire`] ([`STDIO`], [`MCP`]) says
//! so, one field per difference, so a rule added to one is visibly not
//! added to the other.
//!
//! Pure: no I/O and no runs. It never resolves config or agent files: the
//! server does that with the spawn's patch ([`Spawn::patch`]).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};
use subagent_protocol::RunMode;

use crate::RunRequest;
use crate::config::LimitSet;
use crate::request::RequestPatch;
use crate::run::RunPlan;

/// A spawn, checked: what the server resolves and runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Spawn {
    /// The agent, when named (else the server's default).
    pub agent: Option<String>,
    /// The tasks in order; exactly one for [`RunMode::Single`].
    pub tasks: Vec<String>,
    /// How they run.
    pub mode: RunMode,
    /// Parallel children at once; `None`: every task at once.
    pub concurrency: Option<usize>,
    /// JSON Schema text the output must satisfy.
    pub output_schema_json: Option<String>,
    /// Answer with the job id at once.
    pub background: bool,
    /// Provider override.
    pub provider: Option<String>,
    /// Model override.
    pub model: Option<String>,
    /// Limit overrides, over the server's (at most its own).
    pub limits: LimitSet,
    /// Tools, a subset of the server's.
    pub tools: Option<Vec<String>>,
    /// Network for tool processes.
    pub allow_network: Option<bool>,
    /// Workspace, the server's or below it.
    pub workspace: Option<std::path::PathBuf>,
    /// A recorded run to continue (a run id); its one task is the
    /// follow-up, empty to continue an interrupted run as it stood.
    pub resume: Option<String>,
    /// How tools see the workspace: `overlay` or `none` (not above the
    /// server's).
    pub isolation: Option<crate::layer::WorkspaceIsolation>,
    /// When a layered run's changes are applied: `on-success` or `never`.
    pub apply: Option<crate::layer::ApplyMode>,
    /// The caller's W3C trace context: the runs' spans are its children.
    pub trace_parent: Option<crate::telemetry::TraceParent>,
}

impl Spawn {
    /// `requests` with this spawn's trace parent, if it names one.
    pub fn traced(&self, mut requests: Vec<RunRequest>) -> Vec<RunRequest> {
        if let Some(parent) = &self.trace_parent {
            for request in &mut requests {
                request.trace_parent = Some(parent.clone());
            }
        }
        requests
    }

    /// What this spawn changes of the server's settings.
    pub fn patch(&self) -> RequestPatch {
        RequestPatch {
            agent: self.agent.clone(),
            provider: self.provider.clone(),
            model: self.model.clone(),
            limits: self.limits.clone(),
            output_schema_json: self.output_schema_json.clone(),
            tools: self.tools.clone(),
            allow_network: self.allow_network,
            workspace: self.workspace.clone(),
            resume: self.resume.clone(),
            isolation: self.isolation,
            apply: self.apply,
            ..RequestPatch::default()
        }
    }

    /// The plan that runs `requests` (one per task) the way this spawn asks.
    pub fn plan(&self, requests: Vec<RunRequest>) -> RunPlan {
        RunPlan::new(self.mode, requests).with_concurrency(self.concurrency)
    }
}

/// What one wire accepts of a spawn, where the two wires differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpawnWire {
    /// How a refusal to read the arguments begins, in the wire's words.
    pub invalid: &'static str,
    /// `concurrency` is an argument; without it, the field is unknown.
    pub concurrency: bool,
    /// Parallel children at once when the spawn does not say; `None`:
    /// every task at once.
    pub default_concurrency: Option<usize>,
    /// How `task`, `tasks` and `mode` combine.
    pub tasks: TaskFields,
    /// `traceparent` and `tracestate` are fields (stdio; MCP has them in
    /// the request's `_meta`).
    pub trace_fields: bool,
}

/// How a wire reads `task`, `tasks` and `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskFields {
    /// `task` is mode single's, `tasks` mode parallel's (the default for a
    /// list) or chain's; never both; a blank task is refused.
    ByMode,
    /// `task` then `tasks`, joined, blank ones dropped; mode single (the
    /// default) takes at most one.
    Joined,
}

/// `serve --stdio`'s `spawn` params.
pub const STDIO: SpawnWire = SpawnWire {
    invalid: "invalid spawn params",
    concurrency: false,
    default_concurrency: None,
    tasks: TaskFields::ByMode,
    trace_fields: true,
};

/// `serve --mcp`'s `subagent` tool arguments.
pub const MCP: SpawnWire = SpawnWire {
    invalid: "invalid arguments",
    concurrency: true,
    // The server picks it: the per-call default lowered to its limit
    // (`run::concurrency_for`), which the parser does not know.
    default_concurrency: None,
    tasks: TaskFields::Joined,
    trace_fields: false,
};

/// The fields both wires share, as the client sent them.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawSpawn {
    agent: Option<String>,
    task: Option<String>,
    tasks: Option<Vec<String>>,
    mode: Option<RunMode>,
    output_schema: Option<Value>,
    #[serde(default)]
    background: bool,
    provider: Option<String>,
    model: Option<String>,
    limits: Option<BTreeMap<String, Value>>,
    tools: Option<Vec<String>>,
    allow_network: Option<bool>,
    workspace: Option<std::path::PathBuf>,
    resume: Option<String>,
    isolation: Option<String>,
    apply: Option<String>,
}

/// Reads a spawn as `wire` accepts it; the error says what is wrong in the
/// words of the wire's schema.
pub fn parse_spawn(wire: &SpawnWire, mut params: Map<String, Value>) -> Result<Spawn, String> {
    // Taken out before the rest is read, so that on a wire without it the
    // field is refused as unknown like any other.
    let concurrency = match wire.concurrency.then(|| params.remove("concurrency")) {
        Some(Some(value)) => serde_json::from_value::<Option<usize>>(value)
            .map_err(|e| format!("{}: concurrency: {e}", wire.invalid))?,
        _ => None,
    };
    let trace_parent = if wire.trace_fields {
        trace_parent_of(
            params.remove("traceparent"),
            params.remove("tracestate"),
            "traceparent",
        )
    } else {
        None
    };
    let raw: RawSpawn = serde_json::from_value(Value::Object(params))
        .map_err(|e| format!("{}: {e}", wire.invalid))?;
    let (mode, tasks) = match wire.tasks {
        TaskFields::ByMode => tasks_by_mode(&raw)?,
        TaskFields::Joined => tasks_joined(&raw)?,
    };
    if concurrency.is_some() && mode != RunMode::Parallel {
        return Err("concurrency applies to mode parallel only".to_owned());
    }
    let output_schema_json = match raw.output_schema {
        None => None,
        Some(schema @ Value::Object(_)) => Some(schema.to_string()),
        Some(_) => return Err("`outputSchema` must be a JSON Schema object".to_owned()),
    };
    Ok(Spawn {
        agent: raw.agent,
        tasks,
        mode,
        concurrency: concurrency.or(wire.default_concurrency),
        output_schema_json,
        background: raw.background,
        provider: raw.provider,
        model: raw.model,
        limits: LimitSet::from_json(raw.limits.unwrap_or_default())?,
        tools: raw.tools,
        allow_network: raw.allow_network,
        workspace: raw.workspace,
        resume: raw.resume,
        isolation: raw
            .isolation
            .as_deref()
            .map(str::parse)
            .transpose()
            .map_err(|e| format!("{}: {e}", wire.invalid))?,
        apply: raw
            .apply
            .as_deref()
            .map(str::parse)
            .transpose()
            .map_err(|e| format!("{}: {e}", wire.invalid))?,
        trace_parent,
    })
}

/// The trace parent a caller's `traceparent` (and `tracestate`) value
/// names; anything else is ignored with one warning naming `source`:
/// trace context never fails a spawn.
pub fn trace_parent_of(
    traceparent: Option<Value>,
    tracestate: Option<Value>,
    source: &str,
) -> Option<crate::telemetry::TraceParent> {
    let state = match tracestate {
        Some(Value::String(state)) => Some(state),
        _ => None,
    };
    match traceparent? {
        Value::String(parent) => {
            crate::telemetry::TraceParent::parse_or_warn(source, &parent, state.as_deref())
        }
        other => {
            tracing::warn!("ignoring {source}: it must be a string, not {other}");
            None
        }
    }
}

/// [`TaskFields::ByMode`].
fn tasks_by_mode(raw: &RawSpawn) -> Result<(RunMode, Vec<String>), String> {
    let resuming = raw.resume.is_some();
    if resuming && (raw.tasks.is_some() || raw.mode.is_some_and(|m| m != RunMode::Single)) {
        return Err("`resume` continues one run: give at most `task`, mode single".to_owned());
    }
    // Resuming without a follow-up: an interrupted run continues as it stood.
    let task = raw.task.clone().or_else(|| resuming.then(String::new));
    let (mode, tasks) = match (raw.mode, task, raw.tasks.clone()) {
        (_, Some(_), Some(_)) => return Err("give `task` or `tasks`, not both".to_owned()),
        (None | Some(RunMode::Single), Some(task), None) => (RunMode::Single, vec![task]),
        (Some(mode @ (RunMode::Parallel | RunMode::Chain)), Some(_), None) => {
            return Err(format!("mode {mode} takes `tasks` (a list), not `task`"));
        }
        (None | Some(RunMode::Parallel), None, Some(tasks)) => (RunMode::Parallel, tasks),
        (Some(RunMode::Chain), None, Some(tasks)) => (RunMode::Chain, tasks),
        (Some(RunMode::Single), None, Some(_)) => {
            return Err("mode single takes `task`, not `tasks`".to_owned());
        }
        (_, None, None) => {
            return Err(
                "missing task: give `task` (or `tasks` with mode parallel or chain)".to_owned(),
            );
        }
    };
    if tasks.is_empty() {
        return Err("`tasks` is empty: give at least one task".to_owned());
    }
    if let Some(i) = tasks.iter().position(|t| t.trim().is_empty() && !resuming) {
        return Err(format!("task {} is empty", i + 1));
    }
    Ok((mode, tasks))
}

/// [`TaskFields::Joined`].
fn tasks_joined(raw: &RawSpawn) -> Result<(RunMode, Vec<String>), String> {
    let mode = raw.mode.unwrap_or_default();
    let mut tasks: Vec<String> = raw
        .task
        .iter()
        .chain(raw.tasks.iter().flatten())
        .filter(|t| !t.trim().is_empty())
        .cloned()
        .collect();
    if raw.resume.is_some() && mode != RunMode::Single {
        return Err("resume continues one run: leave mode single".to_owned());
    }
    // Resuming without a task continues an interrupted run as it stood.
    if tasks.is_empty() && raw.resume.is_some() {
        tasks.push(String::new());
    }
    if tasks.is_empty() {
        return Err("no task: give `task` (or `tasks` with mode parallel or chain)".to_owned());
    }
    if mode == RunMode::Single && tasks.len() > 1 {
        return Err(format!(
            "{} tasks were given: set mode to parallel or chain",
            tasks.len()
        ));
    }
    Ok((mode, tasks))
}

#[cfg(test)]
#[path = "spawn_tests.rs"]
mod tests;
