//! Where session files go: `<sessions_dir>/YYYY/MM/DD/<runId>-<agent>.jsonl`.
//!
//! The default sessions dir is `$SUBAGENT_HOME/sessions`, with
//! `SUBAGENT_HOME` defaulting to `$XDG_STATE_HOME/subagent`, then
//! `~/.local/state/subagent`. Nothing here creates files; the writer does.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The sessions dir from the environment, per the rule above; `None` when
/// neither `SUBAGENT_HOME`, `XDG_STATE_HOME` nor `HOME` is set.
pub fn default_sessions_dir() -> Option<PathBuf> {
    let non_empty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let home = non_empty("SUBAGENT_HOME")
        .map(PathBuf::from)
        .or_else(|| non_empty("XDG_STATE_HOME").map(|x| PathBuf::from(x).join("subagent")))
        .or_else(|| non_empty("HOME").map(|h| PathBuf::from(h).join(".local/state/subagent")))?;
    Some(home.join("sessions"))
}

/// The files of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionPaths {
    /// The JSONL session file.
    pub session_file: PathBuf,
    /// Where the full output goes when returned text is truncated.
    pub full_output_file: PathBuf,
}

impl SessionPaths {
    /// Paths of run `run_id` of `agent` under `sessions_dir`, dated `now` (UTC).
    pub fn new(sessions_dir: &Path, run_id: &str, agent: &str, now: SystemTime) -> Self {
        let stamp = subagent_protocol::time::rfc3339_ms(now);
        // "YYYY-MM-DDT..." -> YYYY/MM/DD
        let (y, m, d) = (
            stamp.get(0..4).unwrap_or("0000"),
            stamp.get(5..7).unwrap_or("00"),
            stamp.get(8..10).unwrap_or("00"),
        );
        let dir = sessions_dir.join(y).join(m).join(d);
        let stem = format!("{run_id}-{}", file_safe(agent));
        Self {
            session_file: dir.join(format!("{stem}.jsonl")),
            full_output_file: dir.join(format!("{stem}.output.txt")),
        }
    }
}

/// Agent names come from users; keep file names to a safe alphabet.
fn file_safe(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if cleaned.is_empty() {
        "agent".to_owned()
    } else {
        cleaned
    }
}

#[cfg(test)]
#[path = "paths_tests.rs"]
mod tests;

/// Where the kept layers of a sessions dir live (a run's copy-on-write
/// changes kept for `subagent apply`): beside the session files, so `gc`
/// removes a run's layer with its file.
pub fn layers_dir(sessions_dir: &Path) -> PathBuf {
    sessions_dir.join("layers")
}
