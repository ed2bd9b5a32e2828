//! One request arriving through a server (a `serve --stdio` spawn, an MCP
//! `subagent` call) as runs: the server's [`RunFlags`] patched by the
//! request's [`RequestPatch`] (the library's one overrides path), resolved
//! with the config and agent files, then brought under the server's
//! ceilings (`subagent_supervisor::run::Ceilings`) or refused.
//!
//! It never reads a request off the wire (the servers do) and never runs
//! one.

use anyhow::Result;
use subagent_supervisor::RunRequest;
pub(super) use subagent_supervisor::config::{RequestPatch, agent_tools};
use subagent_supervisor::run::{Asked, Ceilings, Owner};

use super::run_flags::RunFlags;

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
        patch: &RequestPatch,
        tasks: &[String],
    ) -> Result<Vec<RunRequest>> {
        let prepared = self.prepare(&patch.apply(&self.overrides()))?;
        let mut template = prepared.request;
        // Config and agent files stay the server's: a workspace below its
        // own is one its tools may write.
        patch.apply_to(&mut template);
        let agent_tools = agent_tools(&prepared.config, &template.agent);
        let asked = Asked {
            limits: &patch.limits,
            tools: patch.tools.is_some() || self.tools.is_some(),
            agent_tools: &agent_tools,
        };
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
