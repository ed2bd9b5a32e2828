//! The `.git` check around one process-tool call ([`crate::git_guard`]):
//! a snapshot before the call starts (a workspace too large to check is
//! refused before anything runs), and, once the call's whole process tree
//! is gone, the comparison, the quarantine of what changed, and the report
//! for the model and the session file.
//!
//! The after-part runs as the tool sandbox's [`subagent_sandbox::AfterExit`]
//! work, so it also runs for a call that was cancelled or timed out, whose
//! future was dropped: a `.git` made by a tool that then made its run time
//! out is set aside all the same.
//!
//! It only times the check and words its report: what counts as changed,
//! and the renaming, are [`crate::git_guard`]'s.

use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;

use crate::git_guard::{self, Change, GitSnapshot, MAX_DEPTH, MAX_ENTRIES};
use crate::tool::ToolError;

/// The workspace as it was before a call.
#[derive(Debug)]
pub(crate) struct BeforeCall {
    root: Arc<OwnedFd>,
    snapshot: GitSnapshot,
}

/// What the check after a call found and did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct GitReport {
    /// Appended to what the model reads; empty when there is nothing to say.
    pub text: String,
    /// One line each for the session file.
    pub notices: Vec<String>,
}

/// Takes the snapshot of the workspace `root` before a call; a workspace
/// past the walk's bounds is refused (nothing could be checked after).
pub(crate) async fn before_call(root: Arc<OwnedFd>) -> Result<BeforeCall, ToolError> {
    let walked = Arc::clone(&root);
    let snapshot = tokio::task::spawn_blocking(move || git_guard::snapshot(walked.as_fd()))
        .await
        .map_err(|e| ToolError::Failed(format!("the workspace could not be checked: {e}")))?
        .map_err(|e| ToolError::Failed(format!("the workspace could not be checked: {e}")))?;
    if !snapshot.complete() {
        return Err(ToolError::Failed(format!(
            "not run: the workspace has more than {MAX_ENTRIES} entries or is deeper than \
             {MAX_DEPTH} levels, too large to check for .git entries a call could leave for the \
             host's git to run; the operator must choose a smaller workspace (a subdirectory)"
        )));
    }
    Ok(BeforeCall { root, snapshot })
}

impl BeforeCall {
    /// Walks again, sets aside every `.git` entry made or changed since the
    /// snapshot (but the root's own when `top_protected`: the call could
    /// not write it), and says what it did. Blocking.
    pub(crate) fn after_call(self, tag: &str, top_protected: bool) -> GitReport {
        let after = match git_guard::snapshot(self.root.as_fd()) {
            Ok(after) => after,
            Err(e) => {
                let line = format!(
                    "the workspace could not be checked for .git entries after the call ({e}); \
                     check it before running git in it"
                );
                return GitReport {
                    text: format!("\n--- .git check: {line} ---\n"),
                    notices: vec![line],
                };
            }
        };
        let mut report = GitReport::default();
        let mut moved: Vec<String> = Vec::new();
        for (entry, change) in git_guard::changes(&self.snapshot, &after, top_protected) {
            let line = match git_guard::quarantine(self.root.as_fd(), &entry, tag) {
                Ok(to) => {
                    moved.push(format!("`{}` ({})", entry.display(), change.describe()));
                    quarantined_line(&entry, change, &to)
                }
                Err(e) => format!(
                    "{} ({}) could not be quarantined: {e}; do not run git in that directory \
                     before checking its config and hooks",
                    entry.display(),
                    change.describe()
                ),
            };
            report.notices.push(line);
        }
        if !moved.is_empty() {
            report.text.push_str(&format!(
                "\n--- .git quarantined: {} renamed to .git.quarantined-{tag} beside it: git on \
                 the host would run commands its config and hooks name. Do not make or change \
                 .git entries in the workspace ---\n",
                moved.join(", ")
            ));
        }
        if !after.complete() {
            let line = format!(
                "the .git check after the call stopped after {} entries (the workspace grew past \
                 {MAX_ENTRIES} entries or {MAX_DEPTH} levels): .git entries past that were not \
                 checked; check the workspace before running git in it",
                after.read()
            );
            report.text.push_str(&format!("\n--- {line} ---\n"));
            report.notices.push(line);
        }
        report
    }
}

fn quarantined_line(entry: &Path, change: Change, to: &Path) -> String {
    format!(
        "quarantined {} ({}) as {}: git on the host would run what its config and hooks name",
        entry.display(),
        change.describe(),
        to.display()
    )
}
