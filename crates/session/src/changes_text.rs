//! A run's `changes` line as text, for `sessions show` and the HTML
//! transcript: what the run changed, what was applied, what was left as a
//! conflict or refused, and where kept changes are.
//!
//! Pure formatting; it decides nothing about the changes.

use std::fmt::Write as _;

use subagent_protocol::changes::Changes;

/// The changes as rows: a summary, then one row per path.
pub fn changes_text(changes: &Changes) -> String {
    let mut out = format!(
        "changes: {} path(s), {} applied, {} conflict(s), {} refused",
        changes.files.len(),
        changes.applied.len(),
        changes.conflicts.len(),
        changes.refused.len()
    );
    for file in &changes.files {
        let from = file
            .from
            .as_deref()
            .map(|f| format!(" (from {f})"))
            .unwrap_or_default();
        let fate = if changes.applied.contains(&file.path) {
            "applied"
        } else if changes.conflicts.iter().any(|c| c.path == file.path) {
            "conflict"
        } else if changes.refused.iter().any(|c| c.path == file.path) {
            "refused"
        } else {
            "not applied"
        };
        let _ = write!(
            out,
            "\n  {} {}{from}, {} bytes: {fate}",
            file.kind.as_str(),
            file.path,
            file.bytes
        );
    }
    for issue in changes.conflicts.iter().chain(&changes.refused) {
        let _ = write!(out, "\n  {}: {}", issue.path, issue.reason);
    }
    if let Some(why) = &changes.not_applied {
        let _ = write!(out, "\n  nothing applied: {why}");
    }
    if let Some(layer) = &changes.layer {
        let _ = write!(
            out,
            "\n  kept in {layer} (subagent diff RUN, subagent apply RUN)"
        );
    }
    out
}
