//! The merged view of a running parent, handed to its nested subagents: a
//! nested run works on what its parent sees (its writes included), and
//! its changes become the parent's when it completes.
//!
//! Holds descriptors only; entering the view is the sandbox's, applying
//! to it is [`super::settle`]'s.

use std::sync::Arc;

use subagent_sandbox::{LayerJoin, RunLayer};

/// A parent run's view (its namespaces and merged root), shared by its
/// nested requests; equal only to itself.
#[derive(Debug, Clone)]
pub struct ParentView(Arc<LayerJoin>);

impl ParentView {
    /// The view `layer`'s run sees.
    pub(crate) fn of(layer: &RunLayer) -> std::io::Result<Self> {
        Ok(Self(Arc::new(layer.join()?)))
    }

    /// Descriptors of the view for one child to enter or stack on.
    pub(crate) fn join(&self) -> std::io::Result<LayerJoin> {
        self.0.try_clone()
    }
}

impl PartialEq for ParentView {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
