//! The tool sandbox: the layers a tool process gets on top of the worker's
//! protections (process group, rlimits, cgroup caps, capture, tree kill).
//!
//! - [`config`]: what the caller asks for ([`Isolation`], [`Layers`]).
//! - [`support`]: what this kernel allows, probed once per process.
//! - [`namespaces`], [`view`], [`landlock`], [`seccomp`], [`capabilities`]:
//!   one layer each, split into a pre-fork plan (which may allocate) and an
//!   in-child step (which must not; [`view_build`] for the view).
//! - [`view_protect`]: what the view keeps read-only (or takes the name
//!   of) inside a writable root; [`view_mount`]: the mounts both speak of.
//! - [`step`]: the numbered in-child steps of the namespaces and the view.
//! - [`enter`]: the in-child sequence that applies them in the one order
//!   that works (namespaces, filesystem view with a fresh /proc, Landlock,
//!   capabilities, seccomp).
//!
//! Nothing here starts a process by itself except the one-time probe.

pub(crate) mod config;
pub(crate) mod enter;
pub(crate) mod landlock;
pub(crate) mod namespaces;
pub(crate) mod plan;
pub(crate) mod seccomp;
pub(crate) mod seccomp_rules;
pub(crate) mod support;
pub(crate) mod view;
pub(crate) mod view_build;
pub(crate) mod view_mount;
pub(crate) mod view_protect;

pub use crate::capabilities::{OwnCapabilities, drop_own as drop_own_capabilities};
pub use config::{
    Isolation, Layers, PRIVATE_TMP_BYTES, PROTECTED_WORKSPACE_ENTRIES, SYSTEM_READ_ONLY_PATHS,
    SYSTEM_READ_WRITE_FILES,
};
pub use plan::isolation_status;
pub use support::{IsolationSupport, isolation_support, prewarm_isolation_support};
