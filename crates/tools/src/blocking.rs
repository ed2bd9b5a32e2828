//! Running a tool's blocking filesystem work off the async threads, and
//! stopping it when nobody waits for the result any more.
//!
//! [`crate::run_tool`] stops a call by dropping its future, but a
//! `spawn_blocking` closure cannot be dropped: a walk of a huge tree would go
//! on after its timeout. So the closure gets a [`CancelFlag`] that is raised
//! when the future is dropped, and long loops check it. This module never
//! touches the filesystem itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::tool::ToolError;

/// Raised once the call that started the work has been dropped.
#[derive(Debug, Clone, Default)]
pub(crate) struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// True once nobody waits for the result.
    pub(crate) fn is_raised(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// The error a cancelled loop returns; nobody reads it.
    pub(crate) fn error() -> ToolError {
        ToolError::Failed("cancelled".to_owned())
    }
}

/// Raises the flag when dropped, i.e. when the call's future is dropped.
pub(crate) struct RaiseOnDrop(pub(crate) CancelFlag);

impl Drop for RaiseOnDrop {
    fn drop(&mut self) {
        self.0.0.store(true, Ordering::Relaxed);
    }
}

/// Runs `work` on tokio's blocking pool and waits for it.
pub(crate) async fn run_blocking<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(&CancelFlag) -> Result<T, ToolError> + Send + 'static,
{
    let flag = CancelFlag::default();
    let _raise = RaiseOnDrop(flag.clone());
    match tokio::task::spawn_blocking(move || work(&flag)).await {
        Ok(result) => result,
        Err(e) => Err(ToolError::Failed(format!(
            "the tool's blocking task failed: {e}"
        ))),
    }
}

#[cfg(test)]
#[path = "blocking_tests.rs"]
mod tests;
