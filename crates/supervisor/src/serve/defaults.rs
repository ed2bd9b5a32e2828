//! A server's own settings ([`ServeDefaults`]: what its flags or its
//! library caller fixed) as the defaults of every run it starts and the
//! ceilings a request is held under; one request's [`RequestPatch`] turned
//! into runs, or refused with a [`SpawnError`].
//!
//! It never reads the wire (the protocols parse a request into a patch)
//! and never runs anything.

use std::sync::Arc;

use crate::RunRequest;
use crate::config::RunOverrides;
pub use crate::error_chain::error_chain;
use crate::jobs::JobsError;
use crate::prepare::{
    PrepareError, PrepareSettings, PrepareWarning, Prepared, agent_tools, prepare,
};
use crate::request::RequestPatch;
use crate::resume::{self, ResumeError};
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
    /// The recorded run to continue cannot be continued.
    #[error(transparent)]
    Resume(#[from] ResumeError),
    /// The jobs registry refused the job.
    #[error(transparent)]
    Jobs(#[from] JobsError),
    /// A foreground job was gone from the registry when it ended.
    #[error("the job vanished")]
    Vanished,
    /// Preparing the request (which reads files, off the runtime's
    /// threads) did not finish.
    #[error("preparing the run stopped")]
    Preparing(#[source] tokio::task::JoinError),
}

impl ServeDefaults {
    /// The request template and supervisor config for `overrides`.
    pub fn prepare(&self, overrides: &RunOverrides) -> Result<Prepared, PrepareError> {
        prepare(&self.settings, overrides, &|warning| (self.warn)(warning))
    }

    /// [`Self::requests_for`] on the runtime's blocking pool: it reads the
    /// workspace's config, agent and trust files, which must not hold up
    /// the threads that serve every other request.
    pub async fn requests_off_runtime(
        self: Arc<Self>,
        ceilings: Arc<Ceilings>,
        patch: RequestPatch,
        tasks: Vec<String>,
    ) -> Result<Vec<RunRequest>, SpawnError> {
        tokio::task::spawn_blocking(move || self.requests_for(&ceilings, &patch, &tasks))
            .await
            .map_err(SpawnError::Preparing)?
    }

    /// One resolved request per task: these defaults patched by one
    /// request, held under `ceilings`.
    pub fn requests_for(
        &self,
        ceilings: &Ceilings,
        patch: &RequestPatch,
        tasks: &[String],
    ) -> Result<Vec<RunRequest>, SpawnError> {
        let mut overrides = patch.apply(&self.overrides);
        let recorded = match &patch.resume {
            Some(target) => {
                let prepared = self.prepare(&self.overrides)?;
                // By id only, and only a run of the server's workspace.
                let recorded = resume::load_in_reach(
                    &prepared.config.sessions_dir,
                    target,
                    &ceilings.operator().workspace_dir,
                )?;
                // The recording's agent unless the request names one (a
                // name in the operator's catalog); the model is the
                // server's or the request's, never the recording's.
                overrides.agent.get_or_insert(recorded.header.agent.clone());
                Some(recorded)
            }
            None => None,
        };
        let prepared = self.prepare(&overrides)?;
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
        if let Some(recorded) = recorded {
            let ask = resume::ResumeAsk {
                task: tasks.first().filter(|t| !t.is_empty()).cloned(),
                tools: patch.tools.is_some(),
                current_tools: template
                    .tools
                    .clone()
                    .unwrap_or_else(|| agent_tools.clone()),
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
