//! A run's copy-on-write workspace layer, from the run's side: whether it
//! gets one (`--isolation overlay` and a tool that can write), what the
//! sandbox is asked for (a tmpfs capped by `--tool-disk` and an inode
//! count), the refusal when the kernel cannot give it, and, once the run
//! ended, the settlement of its changes ([`crate::layer`]) into the result
//! and the session file.
//!
//! It decides only whether the changes may be applied (the run completed:
//! no error in its result); what is applied, refused or a conflict is
//! [`crate::layer`]'s.

use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::time::SystemTime;

use subagent_protocol::changes::Changes;
use subagent_protocol::result::SubagentResult;
use subagent_protocol::{TaskSpec, tool_names};
use subagent_sandbox::{RunLayer, SpawnError, WorkspaceLayer};

use crate::layer::{Settlement, WorkspaceIsolation};

use super::request::RunRequest;

/// Fewest inodes a layer holds, whatever its byte cap.
const MIN_LAYER_INODES: u64 = 4096;

/// Most inodes a layer holds: each costs the kernel memory beside the
/// bytes `size=` counts.
const MAX_LAYER_INODES: u64 = 1 << 20;

/// Bytes per inode a layer is given room for.
const BYTES_PER_INODE: u64 = 4096;

/// A started run's layer and what its settlement needs.
#[derive(Debug)]
pub(super) struct LiveLayer {
    layer: RunLayer,
    /// The workspace as the run started, by descriptor: where the changes
    /// are compared and applied.
    workspace: OwnedFd,
    /// Just before the worker started.
    started: SystemTime,
}

/// Whether `request`'s tools see the workspace through a layer: overlay
/// isolation and a tool that can write (`python_execute`). A run that
/// cannot write needs none and is never refused for want of one.
pub(super) fn wants_layer(request: &RunRequest, spec: &TaskSpec) -> bool {
    request.isolation == WorkspaceIsolation::Overlay
        && spec.tools.iter().any(|t| t == tool_names::PYTHON_EXECUTE)
}

/// The layer the sandbox is asked for: `--tool-disk` bytes, and inodes in
/// proportion (a run of many empty files is held by the inode count, not
/// by bytes it never writes).
pub(super) fn new_layer(request: &RunRequest) -> WorkspaceLayer {
    let bytes = request.limits.tool_disk_bytes;
    WorkspaceLayer::New {
        bytes,
        inodes: (bytes / BYTES_PER_INODE).clamp(MIN_LAYER_INODES, MAX_LAYER_INODES),
        within: None,
    }
}

/// The refusal of a run whose workspace cannot be layered, with the way
/// out.
pub(super) fn refusal(e: &SpawnError) -> String {
    format!(
        "{e}. The run's tools can write, so it does not run without the layer; pass \
         --isolation none (config `isolation = \"none\"`) to let them write in the workspace in \
         place, as they happen, with only a best-effort disk cap"
    )
}

impl LiveLayer {
    /// Holds `layer` of a run started at `started` in `workspace`.
    pub(super) fn new(layer: RunLayer, workspace: OwnedFd, started: SystemTime) -> Self {
        Self {
            layer,
            workspace,
            started,
        }
    }

    /// Collects, judges and applies (or keeps, or discards) the run's
    /// changes; blocking work goes to the blocking pool. Frees the layer.
    pub(super) async fn settle(
        self,
        request: &RunRequest,
        run_id: &str,
        sessions_dir: PathBuf,
        protected: &[PathBuf],
        result: &SubagentResult,
    ) -> Changes {
        let completed = result.details.error.is_none();
        let protected: Vec<PathBuf> = protected
            .iter()
            .map(|p| {
                p.strip_prefix(&request.workspace_dir)
                    .map(PathBuf::from)
                    .unwrap_or_else(|_| p.clone())
            })
            .collect();
        let workspace_dir = request.workspace_dir.clone();
        let apply = request.apply;
        let run_id = run_id.to_owned();
        let settled = tokio::task::spawn_blocking(move || {
            Settlement {
                layer: &self.layer,
                target: self.workspace.as_fd(),
                workspace: &workspace_dir,
                run_id: &run_id,
                sessions_dir: &sessions_dir,
                protected,
                started: self.started,
                apply,
                completed,
                nested: false,
            }
            .settle()
        })
        .await;
        settled.unwrap_or_else(|e| Changes {
            not_applied: Some(format!("settling the run's changes failed: {e}")),
            ..Changes::default()
        })
    }
}
