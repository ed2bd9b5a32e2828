//! What one request may change of the settings of the way in it arrived
//! through ([`RequestPatch`]): a batch task line, a `serve --stdio` spawn,
//! an MCP `subagent` call, a `call` payload. One patch, applied in one
//! place: its part of the overrides before preparing
//! ([`RequestPatch::apply`]), its part of the request after
//! ([`RequestPatch::apply_to`]).
//!
//! It never reads a request off the wire (the ways in parse their own
//! format into a patch) and never checks the patch against the way in's
//! ceilings (`super::Ceilings` does, on the patched request).

use std::path::PathBuf;

use super::run_request::RunRequest;
use crate::config::{LimitSet, RunOverrides};

/// What one request changes of its way in's settings; `None` (or empty
/// limits) leaves a setting as the way in has it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestPatch {
    /// Agent name.
    pub agent: Option<String>,
    /// Provider name or kind.
    pub provider: Option<String>,
    /// The provider's base URL.
    pub base_url: Option<String>,
    /// Model id.
    pub model: Option<String>,
    /// Name of the variable holding the key (never the key itself).
    pub api_key_env: Option<String>,
    /// Limits, over the way in's own.
    pub limits: LimitSet,
    /// The task; `None` keeps the template's (empty until a task is given).
    pub task: Option<String>,
    /// Replaces the agent's system prompt.
    pub system_prompt: Option<String>,
    /// Output schema as JSON text.
    pub output_schema_json: Option<String>,
    /// Tools the child may call.
    pub tools: Option<Vec<String>>,
    /// Network for tool processes.
    pub allow_network: Option<bool>,
    /// Workspace: a relative path is taken from the way in's workspace
    /// (config and agent files stay the way in's).
    pub workspace: Option<PathBuf>,
    /// Ask for reasoning.
    pub reasoning: Option<bool>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Output tokens per turn.
    pub max_tokens: Option<u32>,
    /// A recorded run to continue (a run id or session file); the task is
    /// the follow-up, or empty to continue an interrupted run as it stood.
    /// Read by the ways in that prepare requests (`serve`), not by
    /// [`Self::apply`].
    pub resume: Option<String>,
    /// How tools see the workspace (`overlay` or `none`).
    pub isolation: Option<crate::layer::WorkspaceIsolation>,
    /// When a layered run's changes are applied.
    pub apply: Option<crate::layer::ApplyMode>,
}

impl RequestPatch {
    /// `base` (the way in's overrides) with what this request names
    /// instead: agent, provider, base URL, model, key variable, limits.
    pub fn apply(&self, base: &RunOverrides) -> RunOverrides {
        let mut overrides = base.clone();
        let replace = |slot: &mut Option<String>, with: &Option<String>| {
            if with.is_some() {
                slot.clone_from(with);
            }
        };
        replace(&mut overrides.agent, &self.agent);
        replace(&mut overrides.provider, &self.provider);
        replace(&mut overrides.base_url, &self.base_url);
        replace(&mut overrides.model, &self.model);
        replace(&mut overrides.api_key_env, &self.api_key_env);
        for (key, value) in self.limits.iter() {
            overrides.limits.set(key, value);
        }
        overrides
    }

    /// Puts the rest of this request into `request`, prepared from
    /// [`RequestPatch::apply`]'s overrides: task, system prompt, output
    /// schema, tools, network, workspace, sampling.
    pub fn apply_to(&self, request: &mut RunRequest) {
        if let Some(task) = &self.task {
            request.task.clone_from(task);
        }
        if let Some(prompt) = &self.system_prompt {
            request.system_prompt = Some(prompt.clone());
        }
        if let Some(schema) = &self.output_schema_json {
            request.output_schema_json = Some(schema.clone());
        }
        if let Some(tools) = &self.tools {
            request.tools = Some(tools.clone());
        }
        if let Some(on) = self.allow_network {
            request.allow_network = on;
        }
        if let Some(isolation) = self.isolation {
            request.isolation = isolation;
        }
        if let Some(apply) = self.apply {
            request.apply = apply;
        }
        if let Some(dir) = &self.workspace {
            request.workspace_dir = request.workspace_dir.join(dir);
        }
        if let Some(on) = self.reasoning {
            request.provider.reasoning = on;
        }
        if let Some(temperature) = self.temperature {
            request.provider.temperature = Some(temperature);
        }
        if let Some(max_tokens) = self.max_tokens {
            request.provider.max_tokens = Some(max_tokens);
        }
    }
}

#[cfg(test)]
#[path = "overrides_tests.rs"]
mod tests;
