//! A run's changes to its workspace, from the copy-on-write layer the
//! sandbox put under it (`subagent_sandbox::WorkspaceLayer`) to the
//! workspace: read out of the layer ([`collect`]), judged ([`policy`]),
//! applied file by file against the version the run started from
//! ([`apply`]), kept for later ([`kept`]) and shown as a unified diff
//! ([`diff`]); a parent's view handed to its nested runs ([`parent_view`]).
//!
//! Every file here is read and written by descriptor beneath a directory
//! the caller opened (`openat2` with `RESOLVE_BENEATH` and no symlinks):
//! the layer was written by the run's tools, and the workspace may be
//! changed by anyone while it is applied. It never decides whether a run
//! succeeded: the caller says whether to apply.

pub(crate) mod apply;
pub(crate) mod beneath;
pub(crate) mod change;
pub(crate) mod collect;
pub(crate) mod diff;
pub(crate) mod kept;
pub(crate) mod parent_view;
pub(crate) mod policy;
pub(crate) mod settle;

pub use kept::{KeptLayer, KeptLayerError, layers_dir};
pub use parent_view::ParentView;
pub(crate) use settle::Settlement;
pub use settle::{change_clock_now, settle_completed};
pub use subagent_config::{ApplyMode, WorkspaceIsolation};
