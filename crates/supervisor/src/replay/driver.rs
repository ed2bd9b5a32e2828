//! One replay from start to report: the recorded run's request rebuilt
//! ([`replay_request`]), the replay provider started, the run made through
//! the real [`Supervisor`] (which writes the replay's own session file like
//! any run's), the provider stopped, and the two files compared.
//!
//! The recording is evidence, not authority: the replay runs with what the
//! replaying invocation gives ([`ReplayInvocation`]: its config, agent and
//! workspace), the recorded tools and limits only lowering it, and in the
//! recorded workspace only when that lies within the invocation's. A file
//! whose chain does not hold is not replayed at all.
//!
//! Decides nothing about the terminal: the caller prints the
//! [`ReplayReport`] and the warnings, and picks the exit code.

use std::path::{Path, PathBuf};

use serde::Serialize;
use subagent_protocol::{ProviderKind, ProviderSpec};
use tokio_util::sync::CancellationToken;

use super::divergence::{Divergence, ReplayFacts, first_divergence, status_word};
use super::recording::{Recording, RecordingError};
use super::server::{ReplayServer, ReplayServerError};
use crate::resume::lower::{OutsideWorkspace, lower_limits, lower_tools, recorded_workspace};
use crate::run::{RunRequest, Supervisor};
use crate::session::read::{ReadError, parse_session};
use crate::session::verified::{VerifyError, read_verified};

/// Why a replay could not be made or compared.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A session file could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A session file is not believed (its chain does not hold).
    #[error("{0}; so it is not replayed")]
    Unverified(VerifyError),
    /// The recorded workspace is not one this replay may work in.
    #[error(
        "the recorded run worked in {recorded}, {why}: a recording does not choose where a \
         replay works; pass --workspace, or replay from a directory that holds it"
    )]
    Workspace {
        /// The recorded workspace.
        recorded: String,
        /// Why it is not used.
        why: String,
    },
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

impl From<VerifyError> for ReplayError {
    /// The reason is in the text, said once: not a source as well.
    fn from(e: VerifyError) -> Self {
        ReplayError::Unverified(e)
    }
}

/// What the replaying invocation gives the replay: every setting's
/// ceiling.
#[derive(Debug, Clone)]
pub struct ReplayInvocation {
    /// The run the invocation would make (its config's and agent's limits
    /// and budgets, its workspace).
    pub current: RunRequest,
    /// Its tools (the agent's list): recorded tools beyond them are dropped.
    pub current_tools: Vec<String>,
    /// The workspace was given (`--workspace`): the replay works there.
    pub workspace_given: bool,
}

/// Reads a session file for replay, when its chain holds.
pub fn read_recording(path: &Path) -> Result<Recording, ReplayError> {
    let file = read_verified(path)?;
    let items = parse_session(&file.text());
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
/// `base_url`: same agent, task and output schema; tools, limits and
/// budgets the invocation's, lowered by the recorded ones; the workspace
/// the invocation's (`--workspace`), or the recorded `cwd` when it lies
/// within the invocation's.
pub fn replay_request(
    recording: &Recording,
    base_url: String,
    invocation: &ReplayInvocation,
) -> Result<RunRequest, ReplayError> {
    let header = &recording.header;
    // Whatever dialect the recording used, its turns are provider-neutral
    // and the replay provider speaks openai-chat.
    let provider = ProviderSpec::new(ProviderKind::OpenaiChat, base_url, header.model.clone());
    let current = &invocation.current;
    let mut request = RunRequest::new(header.agent.clone(), header.task.clone(), provider);
    // `None` (an older file) leaves the agent's own tools.
    request.tools = header
        .tools
        .as_ref()
        .map(|tools| lower_tools(tools, &invocation.current_tools));
    request.output_schema_json = header.output_schema.as_ref().map(|s| s.to_string());
    if let Some(mode) = header.output_mode {
        request.output_mode = mode;
    }
    request.limits = current.limits.clone();
    request.budget = current.budget;
    request.max_depth = current.max_depth;
    lower_limits(
        &mut request.limits,
        &mut request.budget,
        header,
        &Default::default(),
    );
    request.workspace_dir = if invocation.workspace_given {
        current.workspace_dir.clone()
    } else {
        recorded_workspace(Path::new(&header.cwd), &current.workspace_dir).map_err(|why| {
            ReplayError::Workspace {
                recorded: header.cwd.clone(),
                why: match why {
                    OutsideWorkspace::Outside => format!(
                        "outside this replay's workspace {} (the current dir)",
                        current.workspace_dir.display()
                    ),
                    OutsideWorkspace::Unresolved(reason) => {
                        format!("which cannot be used ({reason})")
                    }
                },
            }
        })?
    };
    Ok(request)
}

/// Replays `recording` through `supervisor` under what `invocation`
/// gives, and compares the replay's session file with the recording.
pub async fn replay(
    supervisor: &Supervisor,
    recording: &Recording,
    invocation: &ReplayInvocation,
    cancel: CancellationToken,
) -> Result<ReplayReport, ReplayError> {
    let server =
        ReplayServer::start(recording.turns.clone(), recording.header.model.clone()).await?;
    let request = match replay_request(recording, server.base_url(), invocation) {
        Ok(request) => request,
        Err(e) => {
            server.stop().await;
            return Err(e);
        }
    };
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
    let file = PathBuf::from(&session_file);
    let replayed = tokio::task::spawn_blocking(move || read_recording(&file))
        .await
        .map_err(|e| ReplayError::Refused(e.to_string()))??;
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
