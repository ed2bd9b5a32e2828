//! The private network of one run's process tools: started by the first
//! call that needs it, shared by every later call of the run (a network
//! per call would cost a stack start each time), stopped when the run's
//! last context is dropped (or, should the worker die first, by the
//! parent-death signal of its holder and its stack).
//!
//! This module only holds the handle; what the network refuses is
//! `subagent_sandbox::net`'s.

use std::sync::Arc;

use subagent_sandbox::net::{NetworkError, NetworkOptions, PrivateNetwork};

/// The run's private network, once started; clones share it.
#[derive(Debug, Clone, Default)]
pub struct RunNetwork(Arc<tokio::sync::OnceCell<Arc<PrivateNetwork>>>);

impl RunNetwork {
    /// The network, started with `options` by the first caller (a failed
    /// start is not kept: the next call tries again).
    pub async fn get(&self, options: NetworkOptions) -> Result<Arc<PrivateNetwork>, NetworkError> {
        self.0
            .get_or_try_init(|| PrivateNetwork::start(options))
            .await
            .cloned()
    }

    /// The network when a call started it (for tests and benchmarks).
    pub fn started(&self) -> Option<Arc<PrivateNetwork>> {
        self.0.get().cloned()
    }
}
