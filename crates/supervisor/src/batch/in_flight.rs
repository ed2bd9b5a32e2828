//! A batch re-run continues the tasks that were in flight when the last
//! run died, each from its session file's last complete turn, instead of
//! running them from the start (`--restart-interrupted` runs them from
//! zero).
//!
//! Only a file this batch wrote for that task is taken: its header's chain
//! must hold ([`crate::session::heads`]; a file a task planted in the
//! sessions dir, claiming another task's id and a date far ahead, is not
//! even a candidate) and name this results file and that task id, and the
//! whole file must verify before its conversation is read.
//!
//! In: the sessions dir, the batch's results file and the requests of the
//! tasks still to run. Every run of a batch names its task in its session
//! header (`batchTask`), so the newest file of a task that has no results
//! line is the one it was in. Out: those requests turned into
//! continuations ([`crate::resume::continue_request`]), and one sentence
//! per task that could not be continued and so runs from the start. Nothing
//! here runs a task.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::resume::{ResumeAsk, continue_request};
use crate::run::RunRequest;
use crate::session::heads::session_heads;
use crate::session::history::read_continuation;
use crate::session::read::SessionStatus;

/// What a re-run found of the tasks it runs.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct InFlight {
    /// Task ids continued from their last complete turn, with the turns.
    pub continued: Vec<(String, u32)>,
    /// Tasks whose last run could not be continued, and why; they run
    /// from the start.
    pub restarted: Vec<String>,
}

/// Continues each of `requests` (task id, request) whose task was in flight
/// in an earlier run of the batch writing `results`.
pub fn continue_in_flight(
    sessions_dir: &Path,
    results: &Path,
    requests: &mut [(String, RunRequest)],
) -> InFlight {
    let results = results.display().to_string();
    // Newest run of each task of this batch: timestamps are RFC 3339 UTC
    // with ms, so they sort as text.
    let mut newest: HashMap<String, (String, PathBuf)> = HashMap::new();
    for (file, timestamp, header) in session_heads(sessions_dir) {
        let Some(task) = header.batch_task.filter(|t| t.results == results) else {
            continue;
        };
        let newer = newest.get(&task.id).is_none_or(|(t, _)| *t < timestamp);
        if newer {
            newest.insert(task.id, (timestamp, file));
        }
    }
    let mut found = InFlight::default();
    for (id, request) in requests.iter_mut() {
        let Some((_, file)) = newest.get(id.as_str()) else {
            continue;
        };
        let recorded = match read_continuation(file) {
            Ok(recorded) => recorded,
            Err(e) => {
                found.restarted.push(format!("task `{id}`: {e}"));
                continue;
            }
        };
        // A run that ended (a failure recorded before the batch died, or
        // one whose results line was lost) starts over, and so does one
        // that finished no turn: there is nothing to save.
        if recorded.turns == 0
            || !matches!(
                recorded.ending,
                SessionStatus::Interrupted | SessionStatus::Aborted
            )
        {
            continue;
        }
        let turns = recorded.turns;
        // The task line and the flags chose every setting; the
        // conversation is carried, and the recorded limits may only lower
        // the task's.
        let ask = ResumeAsk {
            task: None,
            tools: true,
            current_tools: Vec::new(),
            workspace: true,
            output_schema: true,
            limits: Default::default(),
        };
        let mut continued = request.clone();
        match continue_request(recorded, &mut continued, ask) {
            Ok(()) => {
                *request = continued;
                found.continued.push((id.clone(), turns));
            }
            Err(e) => found.restarted.push(format!("task `{id}`: {e}")),
        }
    }
    found
}
