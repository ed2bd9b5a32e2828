//! The in-child steps of entering a workspace layer, numbered so a failed
//! one can be passed back to the parent and told to the operator.

/// One step of [`super::child`]; its number travels over the handoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerStep {
    /// Joining the enclosing run's user namespace.
    JoinUser = 1,
    /// Joining its mount namespace.
    JoinMount,
    /// The working directory's path, inside the enclosing namespaces, did
    /// not lead to the enclosing run's merged view.
    JoinMoved,
    /// `unshare(CLONE_NEWUSER | CLONE_NEWNS)` (or `CLONE_NEWNS` alone).
    Unshare,
    /// Writing the uid and gid maps.
    IdMap,
    /// Making the mounts private.
    MountPrivate,
    /// Creating the tmpfs of the layer.
    Tmpfs,
    /// Making `upper/` and `work/` in it.
    LayerDirs,
    /// Creating the overlay (the kernel's answer on an unsupported lower
    /// filesystem, or past two stacked overlays).
    Overlay,
    /// Mounting the tmpfs or the overlay on the working directory.
    Attach,
    /// Entering the merged view.
    Enter,
    /// Opening the namespaces' descriptors, or passing them back.
    Handoff,
}

impl LayerStep {
    const ALL: [LayerStep; 12] = [
        LayerStep::JoinUser,
        LayerStep::JoinMount,
        LayerStep::JoinMoved,
        LayerStep::Unshare,
        LayerStep::IdMap,
        LayerStep::MountPrivate,
        LayerStep::Tmpfs,
        LayerStep::LayerDirs,
        LayerStep::Overlay,
        LayerStep::Attach,
        LayerStep::Enter,
        LayerStep::Handoff,
    ];

    /// The step numbered `code`.
    pub(crate) fn from_code(code: u8) -> Option<LayerStep> {
        LayerStep::ALL.into_iter().find(|s| *s as u8 == code)
    }

    /// What the step does, for the refusal.
    pub fn describe(self) -> &'static str {
        match self {
            LayerStep::JoinUser => "joining the enclosing run's user namespace failed",
            LayerStep::JoinMount => "joining the enclosing run's mount namespace failed",
            LayerStep::JoinMoved => {
                "the workspace's path no longer leads to the enclosing run's view"
            }
            LayerStep::Unshare => {
                "creating a user and mount namespace (unshare) was refused; user namespaces may \
                 be disabled (see /proc/sys/user/max_user_namespaces and \
                 kernel.unprivileged_userns_clone)"
            }
            LayerStep::IdMap => "writing the uid and gid maps of the new user namespace failed",
            LayerStep::MountPrivate => "making the new mount namespace's mounts private failed",
            LayerStep::Tmpfs => {
                "creating the layer's tmpfs failed (the new mount API, fsopen, needs Linux 5.2)"
            }
            LayerStep::LayerDirs => "making the layer's upper and work directories failed",
            LayerStep::Overlay => {
                "the kernel refused an overlay on the workspace (overlayfs in a user namespace \
                 needs Linux 5.11; the workspace's filesystem may not support being an overlay's \
                 lower layer, or it is itself on an overlay and the kernel stacks at most two)"
            }
            LayerStep::Attach => "mounting the layer on the workspace failed",
            LayerStep::Enter => "entering the merged view failed",
            LayerStep::Handoff => "passing the layer's descriptors back failed",
        }
    }
}
