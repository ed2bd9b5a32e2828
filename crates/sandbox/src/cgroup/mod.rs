//! Per-child cgroups: discovery of our own cgroup ([`discover`]) and the
//! lifecycle of one child's cgroup ([`child`]).

pub(crate) mod child;
pub(crate) mod discover;

pub(crate) use child::{CgroupMembers, CgroupVerdict, ChildCgroup, child_name_prefix};
pub use discover::{CgroupKind, cgroup_support};
