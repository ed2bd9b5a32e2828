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
use subagent_protocol::session::SessionEntry;
use subagent_protocol::{TaskSpec, tool_names};
use subagent_sandbox::{LayerJoin, RunLayer, SpawnError, WorkspaceLayer};

use crate::layer::{ParentView, Settlement, WorkspaceIsolation};

use crate::request::RunRequest;
use crate::run::record::journal::RunJournal;

/// Fewest inodes a layer holds, whatever its byte cap.
const MIN_LAYER_INODES: u64 = 4096;

/// Most inodes a layer holds: each costs the kernel memory beside the
/// bytes `size=` counts.
const MAX_LAYER_INODES: u64 = 1 << 20;

/// Bytes per inode a layer is given room for.
const BYTES_PER_INODE: u64 = 4096;

/// A started run's layer and what its settlement needs.
#[derive(Debug)]
pub(in crate::run) struct LiveLayer {
    layer: RunLayer,
    /// Where the changes are compared and applied, by descriptor: the
    /// workspace as the run started, or its parent's merged view.
    target: OwnedFd,
    /// Just before the worker started.
    started: SystemTime,
    /// On a parent's view: its changes become the parent's, never kept.
    nested: bool,
    /// This run's view, for its own nested runs.
    view: Option<ParentView>,
}

/// What the sandbox is asked for, and where the layer's changes go.
pub(in crate::run) struct Planned {
    pub(in crate::run) layer: WorkspaceLayer,
    /// `None` for a run that enters its parent's view without a layer of
    /// its own (it cannot write): nothing to settle.
    pub(in crate::run) target: Option<OwnedFd>,
    pub(in crate::run) nested: bool,
}

/// The layer of `request`'s run: a new one over the workspace (`workspace`,
/// the admitted directory), a new one stacked on its parent's view, the
/// parent's view as it is (a nested run that cannot write), or none.
pub(in crate::run) fn plan(
    request: &RunRequest,
    spec: &TaskSpec,
    workspace: Option<&OwnedFd>,
) -> Result<Option<Planned>, String> {
    let hold = |e: std::io::Error| format!("cannot hold the workspace for the run's layer: {e}");
    let can_write = can_write(spec);
    if let Some(view) = &request.parent_view {
        let join = view.join().map_err(hold)?;
        if !can_write {
            return Ok(Some(Planned {
                layer: WorkspaceLayer::Enter(join),
                target: None,
                nested: true,
            }));
        }
        let target = join.merged.try_clone().map_err(hold)?;
        return Ok(Some(Planned {
            layer: new_layer(request, Some(join)),
            target: Some(target),
            nested: true,
        }));
    }
    match workspace {
        Some(fd) if wants_layer(request, spec) => Ok(Some(Planned {
            layer: new_layer(request, None),
            target: Some(fd.try_clone().map_err(hold)?),
            nested: false,
        })),
        _ => Ok(None),
    }
}

/// Whether `request`'s tools see the workspace through a layer of their
/// own: overlay isolation and a tool that can write (`python_execute`,
/// `bash`, `write_file`, `edit_file`, `multi_edit`). A
/// run that cannot write needs none and is never refused for want of one.
fn wants_layer(request: &RunRequest, spec: &TaskSpec) -> bool {
    request.isolation == WorkspaceIsolation::Overlay && can_write(spec)
}

/// Whether one of `spec`'s tools can change the workspace
/// ([`tool_names::WRITING_TOOLS`]: the process tools and the writing file
/// tools).
fn can_write(spec: &TaskSpec) -> bool {
    spec.tools
        .iter()
        .any(|t| tool_names::WRITING_TOOLS.contains(&t.as_str()))
}

/// The layer the sandbox is asked for: `--tool-disk` bytes, and inodes in
/// proportion (a run of many empty files is held by the inode count, not
/// by bytes it never writes).
fn new_layer(request: &RunRequest, within: Option<LayerJoin>) -> WorkspaceLayer {
    let bytes = request.limits.tool_disk_bytes;
    WorkspaceLayer::New {
        bytes,
        inodes: (bytes / BYTES_PER_INODE).clamp(MIN_LAYER_INODES, MAX_LAYER_INODES),
        within,
    }
}

/// The refusal of a run whose workspace cannot be layered, with the way
/// out.
pub(in crate::run) fn refusal(e: &SpawnError) -> String {
    format!(
        "{e}. The run's tools can write, so it does not run without the layer; pass \
         --isolation none (config `isolation = \"none\"`) to let them write in the workspace in \
         place, as they happen, with only a best-effort disk cap"
    )
}

impl LiveLayer {
    /// Holds `layer` of a run started at `started`, whose changes go to
    /// `target`.
    pub(in crate::run) fn new(
        layer: RunLayer,
        target: OwnedFd,
        started: SystemTime,
        nested: bool,
    ) -> Self {
        let view = ParentView::of(&layer).ok();
        Self {
            layer,
            target,
            started,
            nested,
            view,
        }
    }

    /// This run's view, for a nested run to work on.
    pub(in crate::run) fn view(&self) -> Option<ParentView> {
        self.view.clone()
    }

    /// Collects, judges and applies (or keeps, or discards) the run's
    /// changes by its `result`, and names them there and in the session
    /// file; blocking work goes to the blocking pool. Frees the layer.
    pub(in crate::run) async fn settle_into(
        self,
        request: &RunRequest,
        run_id: &str,
        sessions_dir: PathBuf,
        protected: &[PathBuf],
        journal: &RunJournal,
        result: &mut SubagentResult,
    ) {
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
                target: self.target.as_fd(),
                workspace: &workspace_dir,
                run_id: &run_id,
                sessions_dir: &sessions_dir,
                protected,
                started: self.started,
                apply,
                completed,
                nested: self.nested,
            }
            .settle()
        })
        .await;
        let changes = settled.unwrap_or_else(|e| Changes {
            not_applied: Some(format!("settling the run's changes failed: {e}")),
            ..Changes::default()
        });
        journal.write(SessionEntry::Changes(changes.clone())).await;
        if let Some(single) = result.details.results.first_mut() {
            single.changes = Some(changes);
        }
    }
}
