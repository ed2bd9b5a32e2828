//! What a caller asks of a run's workspace layer, and what it gets back.
//!
//! Data only: the descriptors are opened by the child ([`super::child`])
//! and passed back ([`super::handoff`]).

use std::os::fd::OwnedFd;

/// How the child sees its workspace (its working directory).
#[derive(Debug)]
pub enum WorkspaceLayer {
    /// A new layer over the working directory, or over the merged view of
    /// `within` (a nested run on its parent's view; the kernel stacks at
    /// most two overlays).
    New {
        /// Bytes the layer may hold (the tmpfs `size=`): what the run may
        /// write, deleted files' whiteouts and copied-up files included.
        bytes: u64,
        /// Files, directories and links the layer may hold (`nr_inodes=`).
        inodes: u64,
        /// The enclosing run's view to stack on, if any.
        within: Option<LayerJoin>,
    },
    /// The enclosing run's merged view as it is, with no layer of its own:
    /// for a run that cannot write.
    Enter(LayerJoin),
}

/// An enclosing run's view, to enter or to stack on: its namespaces and
/// its merged root (the child checks that its working directory's path
/// leads to that root inside the namespaces).
#[derive(Debug)]
pub struct LayerJoin {
    /// The enclosing run's user namespace (`/proc/PID/ns/user`).
    pub user_ns: OwnedFd,
    /// Its mount namespace (`/proc/PID/ns/mnt`).
    pub mount_ns: OwnedFd,
    /// Its merged view's root directory.
    pub merged: OwnedFd,
}

impl LayerJoin {
    /// Duplicates of the descriptors, for another child to join.
    pub fn try_clone(&self) -> std::io::Result<Self> {
        Ok(Self {
            user_ns: self.user_ns.try_clone()?,
            mount_ns: self.mount_ns.try_clone()?,
            merged: self.merged.try_clone()?,
        })
    }
}

/// A started child's layer. Each descriptor keeps what it names alive
/// after the child and its namespaces are gone: the caller reads the upper
/// layer through [`RunLayer::layer_root`] once the run has ended, and
/// closing them frees the tmpfs.
#[derive(Debug)]
pub struct RunLayer {
    /// The root of the layer's tmpfs: `upper/` holds what the run changed
    /// (overlayfs' format: whiteouts for deletions, `user.overlay.opaque`
    /// on replaced directories), `work/` is overlayfs' own.
    pub layer_root: OwnedFd,
    /// The merged view's root, as the child sees its workspace.
    pub merged: OwnedFd,
    /// The child's user namespace.
    pub user_ns: OwnedFd,
    /// The child's mount namespace.
    pub mount_ns: OwnedFd,
}

impl RunLayer {
    /// The view this layer's run sees, for a nested run to join.
    pub fn join(&self) -> std::io::Result<LayerJoin> {
        Ok(LayerJoin {
            user_ns: self.user_ns.try_clone()?,
            mount_ns: self.mount_ns.try_clone()?,
            merged: self.merged.try_clone()?,
        })
    }
}

/// The name of the upper directory in [`RunLayer::layer_root`].
pub const UPPER_DIR: &str = "upper";
