//! A run's copy-on-write view of its workspace: the worker starts in a user
//! and mount namespace of its own where the workspace directory is covered
//! by an overlay whose lower layer is the workspace (reads pass through)
//! and whose upper layer is a tmpfs the kernel caps in bytes (`size=`) and
//! inodes (`nr_inodes=`). Everything the run's tools write lands in that
//! tmpfs; the host's workspace is not touched until the caller applies
//! the changes. Tool processes the worker starts inherit the view (their
//! own mount namespaces are copies of the worker's), and the worker's file
//! tools read the same merged directory, so a run sees its own writes.
//!
//! - [`spec`]: what the caller asks for ([`WorkspaceLayer`]) and what it
//!   gets back ([`RunLayer`]: the layer's tmpfs, the merged view and the
//!   namespaces, each held by a descriptor that keeps it alive after the
//!   worker is gone).
//! - [`child`]: the steps the forked child takes before exec, planned
//!   before the fork and async-signal-safe; [`step`] names them.
//! - [`handoff`]: the descriptors (or the failed step) passed back to the
//!   parent over a socket pair.
//!
//! It mounts nothing in the caller's namespace and reads no file of the
//! layer: deciding what the layer's changes are, and applying them, is the
//! caller's.

pub(crate) mod child;
pub(crate) mod handoff;
pub(crate) mod spec;
pub(crate) mod step;

pub use spec::{LayerJoin, RunLayer, WorkspaceLayer};
pub use step::LayerStep;
