//! The state one run shares across its steps: its settings, its request,
//! its sanitizer, its spawn tree, the way back up for nested runs, and its
//! record ([`RunJournal`]).
//!
//! Holds and hands out; it writes nothing itself and never decides
//! outcomes.

use std::sync::Arc;
use std::time::Instant;

use super::admission::SpawnTree;
use super::assemble;
use super::config::SupervisorConfig;
use super::journal::RunJournal;
use super::layered::LiveLayer;
use super::nested::NestedRunner;
use super::progress::ProgressEvent;
use super::workspace::AdmittedWorkspace;
use crate::request::RunRequest;
use crate::sanitize::Sanitizer;

/// Everything about the run that the steps below share.
pub(super) struct RunContext<'a> {
    pub(super) config: &'a SupervisorConfig,
    /// Runs the nested subagents this run asks for.
    pub(super) runner: &'a dyn NestedRunner,
    /// The spawn tree of this run's root.
    pub(super) tree: Arc<SpawnTree>,
    pub(super) request: &'a RunRequest,
    /// The workspace as admitted (`None`: a run that never starts).
    pub(super) workspace: Option<AdmittedWorkspace>,
    pub(super) run_id: String,
    pub(super) started: Instant,
    pub(super) sanitizer: Sanitizer,
    /// The session file and the lifecycle lines.
    pub(super) journal: RunJournal,
    /// The run's copy-on-write workspace layer, once its worker started
    /// in one; settled when the run ended.
    pub(super) layer: Option<LiveLayer>,
    /// Its trace spans (a no-op when telemetry is off).
    pub(super) spans: crate::telemetry::RunSpans,
    /// What it does now, for `subagent ps`; removed when the run is dropped.
    pub(super) live: crate::live::LiveRun,
}

impl RunContext<'_> {
    pub(super) fn assembly(&self) -> assemble::Assembly {
        assemble::Assembly {
            run_id: self.run_id.clone(),
            agent: self.request.agent.clone(),
            task: self.sanitizer.mask_secrets(&self.request.task),
            model: self.request.provider.model.clone(),
            mode: self.request.mode,
            limits: self.request.limits.clone(),
            budget: self.request.effective_budget(),
            session_file: self.journal.session_file(),
            full_output_file: self.journal.paths().full_output_file.clone(),
            duration: self.started.elapsed(),
            sanitizer: self.sanitizer.clone(),
        }
    }

    /// Tells the config's progress sink, if any; `event` is built only then.
    pub(super) fn progress(&self, event: impl FnOnce() -> ProgressEvent) {
        if let Some(sink) = &self.config.progress {
            sink.emit(&event());
        }
    }
}
