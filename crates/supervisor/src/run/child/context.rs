//! The state one run shares across its steps: its settings, its request,
//! its sanitizer, its spawn tree, the way back up for nested runs, and its
//! record ([`RunJournal`]).
//!
//! Holds and hands out; it writes nothing itself and never decides
//! outcomes.

use std::sync::Arc;
use std::time::Instant;

use crate::request::RunRequest;
use crate::run::admit::admission::SpawnTree;
use crate::run::admit::workspace::AdmittedWorkspace;
use crate::run::child::layered::LiveLayer;
use crate::run::child::nested::NestedRunner;
use crate::run::config::SupervisorConfig;
use crate::run::progress::events::ProgressEvent;
use crate::run::record::assemble;
use crate::run::record::journal::RunJournal;
use crate::sanitize::Sanitizer;

/// Everything about the run that the steps below share.
pub(in crate::run) struct RunContext<'a> {
    pub(in crate::run) config: &'a SupervisorConfig,
    /// Runs the nested subagents this run asks for.
    pub(in crate::run) runner: &'a dyn NestedRunner,
    /// The spawn tree of this run's root.
    pub(in crate::run) tree: Arc<SpawnTree>,
    pub(in crate::run) request: &'a RunRequest,
    /// The workspace as admitted (`None`: a run that never starts).
    pub(in crate::run) workspace: Option<AdmittedWorkspace>,
    pub(in crate::run) run_id: String,
    pub(in crate::run) started: Instant,
    pub(in crate::run) sanitizer: Sanitizer,
    /// The session file and the lifecycle lines.
    pub(in crate::run) journal: RunJournal,
    /// The run's copy-on-write workspace layer, once its worker started
    /// in one; settled when the run ended.
    pub(in crate::run) layer: Option<LiveLayer>,
    /// Its trace spans (a no-op when telemetry is off).
    pub(in crate::run) spans: crate::telemetry::RunSpans,
    /// What it does now, for `subagent ps`; removed when the run is dropped.
    pub(in crate::run) live: crate::live::LiveRun,
}

impl RunContext<'_> {
    pub(in crate::run) fn assembly(&self) -> assemble::Assembly {
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
    pub(in crate::run) fn progress(&self, event: impl FnOnce() -> ProgressEvent) {
        if let Some(sink) = &self.config.progress {
            sink.emit(&event());
        }
    }
}
