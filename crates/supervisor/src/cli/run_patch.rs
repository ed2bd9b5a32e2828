//! What one request arriving through a server (a `serve --stdio` spawn, an
//! MCP `subagent` call) may change of the server's [`RunFlags`], and the
//! server's ceilings it is held under (`subagent_supervisor::run::Ceilings`):
//! the flags patched by the request, resolved with the config and agent
//! files, then brought under the ceilings or refused.
//!
//! It never reads a request off the wire (the servers do) and never runs
//! one.

use std::path::PathBuf;

use anyhow::Result;
use subagent_supervisor::config::LimitSet;
use subagent_supervisor::resume;
use subagent_supervisor::run::{Asked, Ceilings, Owner};
use subagent_supervisor::{RunRequest, SupervisorConfig};

use super::run_flags::{Prepared, RunFlags};

/// What one request of a server (a `spawn` line, an MCP tool call) may
/// change of the server's flags.
pub(super) struct RequestPatch<'a> {
    /// Agent name.
    pub(super) agent: Option<&'a String>,
    /// Provider name or kind.
    pub(super) provider: Option<&'a String>,
    /// Model id.
    pub(super) model: Option<&'a String>,
    /// Limits, over the flags' own.
    pub(super) limits: &'a LimitSet,
    /// Output schema as JSON text.
    pub(super) output_schema_json: Option<&'a String>,
    /// Tools, a subset of the server's.
    pub(super) tools: Option<&'a Vec<String>>,
    /// Network for tool processes (only `false` unless the server has it).
    pub(super) allow_network: Option<bool>,
    /// Workspace: the server's or a directory below it; a relative path is
    /// taken from the server's workspace.
    pub(super) workspace: Option<&'a PathBuf>,
    /// A recorded run to continue (a run id or session file); its task is
    /// the follow-up, or empty to continue an interrupted run as it stood.
    pub(super) resume: Option<&'a String>,
}

impl RunFlags {
    /// The ceilings these flags (with the config files and the agent they
    /// choose) set for what arrives through `owner`.
    pub(super) fn ceilings(&self, owner: Owner) -> Result<Ceilings> {
        Ok(self.prepare(&self.overrides())?.ceilings(owner))
    }

    /// One resolved request per task: these flags patched by one request,
    /// held under `ceilings` (refused with a [`subagent_supervisor::run::CeilingError`]
    /// in the chain when it asks above one).
    pub(super) fn requests_for(
        &self,
        ceilings: &Ceilings,
        patch: &RequestPatch<'_>,
        tasks: &[String],
    ) -> Result<Vec<RunRequest>> {
        let mut overrides = self.overrides();
        if let Some(agent) = patch.agent {
            overrides.agent = Some(agent.clone());
        }
        if let Some(provider) = patch.provider {
            overrides.provider = Some(provider.clone());
        }
        if let Some(model) = patch.model {
            overrides.model = Some(model.clone());
        }
        for (key, value) in patch.limits.iter() {
            overrides.limits.set(key, value);
        }
        let recorded = match patch.resume {
            Some(target) => {
                let prepared = self.prepare(&self.overrides())?;
                let recorded = resume::load(&prepared.config.sessions_dir, target)?;
                // The recording's agent and model, unless the request names
                // them; the ceilings below hold them like any others.
                overrides.agent.get_or_insert(recorded.header.agent.clone());
                overrides.model.get_or_insert(recorded.header.model.clone());
                Some(recorded)
            }
            None => None,
        };
        let prepared = self.prepare(&overrides)?;
        let mut template = prepared.request;
        if let Some(schema) = patch.output_schema_json {
            template.output_schema_json = Some(schema.clone());
        }
        if let Some(tools) = patch.tools {
            template.tools = Some(tools.clone());
        }
        if let Some(on) = patch.allow_network {
            template.allow_network = on;
        }
        if let Some(dir) = patch.workspace {
            // Config and agent files stay the server's: a directory below
            // its workspace is one its tools may write.
            template.workspace_dir = template.workspace_dir.join(dir);
        }
        let agent_tools = agent_tools(&prepared.config, &template.agent);
        let asked = Asked {
            limits: patch.limits,
            tools: patch.tools.is_some() || self.tools.is_some(),
            agent_tools: &agent_tools,
        };
        if let Some(recorded) = recorded {
            let ask = resume::ResumeAsk {
                task: tasks.first().filter(|t| !t.is_empty()).cloned(),
                tools: patch.tools.is_some(),
                workspace: patch.workspace.is_some(),
                output_schema: patch.output_schema_json.is_some(),
                limits: patch.limits.clone(),
            };
            resume::continue_request(recorded, &mut template, ask)?;
            // The recorded tools are the ask: above the ceilings they are
            // refused, never swapped for the agent's current list.
            let asked = Asked {
                tools: template.tools.is_some(),
                ..asked
            };
            ceilings.admit(&mut template, &asked)?;
            // The ceilings may have taken a tool the history calls.
            resume::check_resumed(&template)?;
            return Ok(vec![template]);
        }
        ceilings.admit(&mut template, &asked)?;
        Ok(tasks
            .iter()
            .map(|task| RunRequest {
                task: task.clone(),
                ..template.clone()
            })
            .collect())
    }
}

/// The tool list of `agent` in the catalog of `config` (none when unknown:
/// admission refuses an unknown agent).
pub(super) fn agent_tools(config: &SupervisorConfig, agent: &str) -> Vec<String> {
    config
        .catalog
        .get(agent)
        .map(|a| a.tools.clone())
        .unwrap_or_default()
}

impl Prepared {
    /// The ceilings this run sets: its limits, switches, provider and
    /// workspace, and its tools (`--tools`, else its agent's).
    pub(super) fn ceilings(&self, owner: Owner) -> Ceilings {
        let tools = self
            .request
            .tools
            .clone()
            .unwrap_or_else(|| agent_tools(&self.config, &self.request.agent));
        Ceilings::new(self.request.clone(), tools, self.raise.clone(), owner)
    }
}
