//! The ceilings the flags set for what callers ask (the tasks of `batch
//! --ceilings-from-flags`, `call` payloads): the flags resolved with the
//! config and agent files (`subagent_supervisor::run::Ceilings`). A
//! request's own changes go through the library's one overrides path,
//! `subagent_supervisor::request::RequestPatch`; the servers' through
//! `subagent_supervisor::serve::ServeDefaults`.
//!
//! It never reads a request and never runs one.

use anyhow::Result;
pub(super) use subagent_supervisor::prepare::agent_tools;
use subagent_supervisor::run::{Ceilings, Owner};

use super::run_flags::RunFlags;

impl RunFlags {
    /// The ceilings these flags (with the config files and the agent they
    /// choose) set for what arrives through `owner`.
    pub(super) fn ceilings(&self, owner: Owner) -> Result<Ceilings> {
        Ok(self.prepare(&self.overrides())?.ceilings(owner))
    }
}
