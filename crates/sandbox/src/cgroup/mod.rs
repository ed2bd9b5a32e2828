//! Per-child cgroups: discovery of our own cgroup ([`discover`]) and the
//! move into a leaf of a delegated one ([`delegate`]), the
//! lifecycle of one child's cgroup ([`child`]), listing and signalling its
//! members ([`members`]), and the sweep of cgroups left by supervisors that
//! died ([`stale`]), and the retry as a program ends of those whose
//! removal timed out ([`retry`]).

pub(crate) mod child;
mod delegate;
pub(crate) mod discover;
mod files;
mod kind;
pub(crate) mod members;
mod prewarm;
pub(crate) mod retry;
mod spare;
mod stale;

pub(crate) use child::{CgroupVerdict, ChildCgroup, child_name_prefix};
pub use discover::cgroup_support;
pub(crate) use discover::cgroup_support_cached;
pub use kind::CgroupKind;
pub(crate) use members::CgroupMembers;
pub(crate) use prewarm::keep_warm;
pub use prewarm::prewarm_attach;
pub(crate) use spare::remove_spare;
pub(crate) use spare::take_or_create;
