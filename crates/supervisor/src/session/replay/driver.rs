//! One replay from start to report: the recorded run's request rebuilt
//! ([`replay_request`]), the replay provider started, the run made through
//! the real [`Supervisor`] (which writes the replay's own session file like
//! any run's), the provider stopped, and the two files compared.
//!
//! Decides nothing about the terminal: the caller prints the
//! [`ReplayReport`] and the warnings, and picks the exit code.

use std::path::{Path, PathBuf};

use serde::Serialize;
use subagent_protocol::{Budget, ProviderKind, ProviderSpec};
use tokio_util::sync::CancellationToken;

use super::divergence::{Divergence, ReplayFacts, first_divergence, status_word};
use super::recording::{Recording, RecordingError};
use super::server::{ReplayServer, ReplayServerError};
use crate::run::{RunRequest, Supervisor};
use crate::session::read::{ReadError, read_session};

/// Why a replay could not be made or compared.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A session file could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A session file has no header.
    #[error("{}: {source}", path.display())]
    Recording {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: RecordingError,
    },
    /// The replay provider could not start.
    #[error(transparent)]
    Server(#[from] ReplayServerError),
    /// The supervisor refused the replayed run before starting it.
    #[error("the replay was refused before it ran: {0}")]
    Refused(String),
}

/// What a replay found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayReport {
    /// True when no divergence was found.
    pub matches: bool,
    /// Model turns of the replay.
    pub turns: usize,
    /// Tool calls of the replay.
    pub tool_calls: usize,
    /// The first difference, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub divergence: Option<Divergence>,
    /// The replay's own session file.
    pub session_file: String,
    /// How the replay ended: completed, failed, aborted.
    #[serde(skip)]
    pub status: &'static str,
}

/// Reads a session file for replay.
pub fn read_recording(path: &Path) -> Result<Recording, ReplayError> {
    let items = read_session(path)?;
    Recording::from_items(&items).map_err(|source| ReplayError::Recording {
        path: path.to_owned(),
        source,
    })
}

/// What of the recording a replay cannot reproduce exactly, one sentence
/// each, for the caller to show before the replay.
pub fn replay_warnings(recording: &Recording) -> Vec<String> {
    let mut warnings: Vec<String> = recording
        .skipped
        .iter()
        .map(|s| format!("skipped a line of the recording: {s}"))
        .collect();
    if recording.header.tools.is_none() {
        warnings.push(format!(
            "the recording does not list its tools (written before session headers did); \
             offering agent {}'s current tools",
            recording.header.agent
        ));
    }
    warnings
}

/// The recorded run's request, pointed at the replay provider at
/// `base_url`: same agent, task, limits, budget, tools and output schema;
/// the workspace is the recorded `cwd` unless `workspace` overrides it.
pub fn replay_request(
    recording: &Recording,
    base_url: String,
    workspace: Option<PathBuf>,
) -> RunRequest {
    let header = &recording.header;
    // Whatever dialect the recording used, its turns are provider-neutral
    // and the replay provider speaks openai-chat.
    let provider = ProviderSpec::new(ProviderKind::OpenaiChat, base_url, header.model.clone());
    let mut request = RunRequest::new(header.agent.clone(), header.task.clone(), provider);
    // `None` (an older file) leaves the agent's own tools.
    request.tools.clone_from(&header.tools);
    request.output_schema_json = header.output_schema.as_ref().map(|s| s.to_string());
    if let Some(mode) = header.output_mode {
        request.output_mode = mode;
    }
    request.budget = Budget {
        max_turns: header.max_turns.unwrap_or(request.budget.max_turns),
        max_cost: header.max_cost,
    };
    request.limits = header.limits.clone();
    request.workspace_dir = workspace.unwrap_or_else(|| PathBuf::from(&header.cwd));
    request
}

/// Replays `recording` through `supervisor` and compares the replay's
/// session file with the recording. `workspace` overrides the recorded one.
pub async fn replay(
    supervisor: &Supervisor,
    recording: &Recording,
    workspace: Option<PathBuf>,
    cancel: CancellationToken,
) -> Result<ReplayReport, ReplayError> {
    let server =
        ReplayServer::start(recording.turns.clone(), recording.header.model.clone()).await?;
    let request = replay_request(recording, server.base_url(), workspace);
    let result = supervisor.run(request, cancel).await;
    let asked_past_end = server.asked_past_end();
    server.stop().await;
    let error = result
        .details
        .error
        .as_ref()
        .map(|e| format!("{}: {}", e.code, e.message));
    let Some(session_file) = result
        .details
        .results
        .first()
        .and_then(|r| r.session_file.clone())
    else {
        return Err(ReplayError::Refused(error.unwrap_or_default()));
    };
    let replayed = read_recording(Path::new(&session_file))?;
    let divergence = first_divergence(
        recording,
        &replayed,
        ReplayFacts {
            asked_past_end,
            error: error.as_deref(),
        },
    );
    Ok(ReplayReport {
        matches: divergence.is_none(),
        turns: replayed.turns.len(),
        tool_calls: replayed.tool_call_count(),
        divergence,
        session_file,
        status: status_word(replayed.status),
    })
}

#[cfg(test)]
#[path = "driver_tests.rs"]
mod tests;
