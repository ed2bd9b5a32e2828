//! Which cgroup hierarchy this process's children get their cgroups in
//! ([`CgroupKind`]), as [`super::discover`] found it. A type only, below
//! every module that makes, fills, sweeps or delegates cgroups.

use std::path::{Path, PathBuf};

/// A writable cgroup hierarchy with memory and pids controllers: where this
/// process's own cgroup is, so per-child cgroups can be made under it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CgroupKind {
    /// cgroup v1: separate memory and pids hierarchies.
    #[non_exhaustive]
    V1 {
        /// Our cgroup directory in the memory hierarchy.
        memory: PathBuf,
        /// Our cgroup directory in the pids hierarchy.
        pids: PathBuf,
        /// Our cgroup directory in the freezer hierarchy, when it is
        /// mounted and writable: children's cgroups are frozen while their
        /// members are killed. Without it they are killed unfrozen.
        freezer: Option<PathBuf>,
    },
    /// cgroup v2: the unified hierarchy.
    #[non_exhaustive]
    V2 {
        /// Our cgroup directory: children's cgroups are made in it.
        dir: PathBuf,
        /// Where `dir` is delegated to us with us inside it: the leaf under
        /// `dir` this process moves into, since cgroup v2 hands controllers
        /// to children only from a cgroup without processes of its own.
        /// `None` in the root cgroup, which hands controllers down with
        /// processes inside.
        leaf: Option<PathBuf>,
    },
}

impl CgroupKind {
    /// A v2 kind, for callers that describe one (a report's tests); the
    /// sandbox finds its own with [`cgroup_support`].
    pub fn v2(dir: PathBuf, leaf: Option<PathBuf>) -> Self {
        CgroupKind::V2 { dir, leaf }
    }

    /// The directories children's cgroups are made in, one per hierarchy;
    /// the v1 freezer first: thawing there is what lets kills in the other
    /// hierarchies land.
    pub(crate) fn parent_dirs(&self) -> Vec<PathBuf> {
        match self {
            CgroupKind::V1 {
                memory,
                pids,
                freezer,
            } => {
                let mut dirs: Vec<PathBuf> = freezer.iter().cloned().collect();
                dirs.extend([memory.clone(), pids.clone()]);
                dirs
            }
            CgroupKind::V2 { dir, .. } => vec![dir.clone()],
        }
    }

    /// The cgroup this process lives in, in the hierarchy children's
    /// cgroups are made in (once a delegated leaf is adopted).
    pub(crate) fn own_cgroup(&self) -> &Path {
        match self {
            CgroupKind::V1 { memory, .. } => memory,
            CgroupKind::V2 { dir, leaf } => leaf.as_deref().unwrap_or(dir),
        }
    }
}
