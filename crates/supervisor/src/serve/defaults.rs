//! A server's own settings ([`ServeDefaults`]: what its flags or its
//! library caller fixed) as the defaults of every run it starts and the
//! ceilings a request is held under; one request's [`RequestPatch`] turned
//! into runs, or refused with a [`SpawnError`].
//!
//! It never reads the wire (the protocols parse a request into a patch)
//! and never runs anything.

use std::sync::Arc;

use crate::RunRequest;
use crate::config::{
    PrepareError, PrepareSettings, PrepareWarning, Prepared, RequestPatch, RunOverrides,
    agent_tools, prepare,
};
pub use crate::error_chain::error_chain;
use crate::jobs::JobsError;
use crate::run::{Asked, CeilingError, Ceilings};

/// Where a server's warnings and messages for its operator go (the CLI:
/// stderr); never the protocol's stdout.
pub type Report = Arc<dyn Fn(&str) + Send + Sync>;

/// Where the warnings of preparing a run go.
pub type WarningSink = Arc<dyn Fn(PrepareWarning) + Send + Sync>;

/// The settings every run of a server starts from.
#[derive(Clone)]
pub struct ServeDefaults {
    /// What the server fixes besides the overrides.
    pub settings: PrepareSettings,
    /// The server's own overrides, which a request may patch.
    pub overrides: RunOverrides,
    /// Warnings of preparing (ignored project files, agent file notes).
    pub warn: WarningSink,
}

/// Why a request's runs could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The patched settings do not make a run (unknown agent or provider, ...).
    #[error(transparent)]
    Prepare(#[from] PrepareError),
    /// The request asks above the server's ceilings.
    #[error(transparent)]
    Ceiling(#[from] CeilingError),
    /// The jobs registry refused the job.
    #[error(transparent)]
    Jobs(#[from] JobsError),
    /// A foreground job was gone from the registry when it ended.
    #[error("the job vanished")]
    Vanished,
}

impl ServeDefaults {
    /// The request template and supervisor config for `overrides`.
    pub fn prepare(&self, overrides: &RunOverrides) -> Result<Prepared, PrepareError> {
        prepare(&self.settings, overrides, &|warning| (self.warn)(warning))
    }

    /// One resolved request per task: these defaults patched by one
    /// request, held under `ceilings`.
    pub fn requests_for(
        &self,
        ceilings: &Ceilings,
        patch: &RequestPatch,
        tasks: &[String],
    ) -> Result<Vec<RunRequest>, SpawnError> {
        let prepared = self.prepare(&patch.apply(&self.overrides))?;
        let mut template = prepared.request;
        // Config and agent files stay the server's: a workspace below its
        // own is one its tools may write.
        patch.apply_to(&mut template);
        let agent_tools = agent_tools(&prepared.config, &template.agent);
        let asked = Asked {
            limits: &patch.limits,
            tools: patch.tools.is_some() || self.settings.tools.is_some(),
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
