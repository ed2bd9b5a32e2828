//! Why a request is refused at its ceilings, and whose ceilings they are:
//! the typed error [`super::Ceilings::admit`] returns, its text naming the
//! limit, the value asked, the ceiling and what to do next.
//!
//! Pure data and wording: it decides nothing.

use std::fmt;
use std::path::PathBuf;

use crate::config::LimitKey;

/// Whose settings are the ceilings, for the refusal's advice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// A server's flags (`serve --stdio`, `serve --mcp`).
    Server,
    /// The flags of `subagent call`.
    Call,
    /// The flags of `subagent batch --ceilings-from-flags`.
    Batch,
    /// The run whose worker asked for a nested subagent.
    Parent,
}

impl Owner {
    pub(super) fn who(self) -> &'static str {
        match self {
            Owner::Server => "the server's",
            Owner::Call => "`subagent call`'s",
            Owner::Batch => "the batch's",
            Owner::Parent => "the parent run's",
        }
    }

    /// What the operator does to lift `what`.
    pub(super) fn lift(self, what: &str, flag: &str) -> String {
        let start = match self {
            Owner::Parent => return format!("a child never gets more {what} than its parent"),
            Owner::Server => "start the server",
            Owner::Call => "run `subagent call`",
            Owner::Batch => "start the batch",
        };
        format!(
            "or {start} with {flag}, or let callers raise it with `--allow-raise {what}` \
             ([serve] allow_raise in the user config)"
        )
    }
}

/// A request above a ceiling.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CeilingError {
    /// A limit or budget above the operator's.
    #[error(
        "limits.{name} = {asked} is above {who} ceiling of {ceiling}: ask for at most {ceiling}; {advice}",
        name = key.agent_key(), who = owner.who()
    )]
    Limit {
        /// The limit.
        key: LimitKey,
        /// What was asked, as a user writes it (`unlimited` for no cap).
        asked: String,
        /// The ceiling.
        ceiling: String,
        /// Whose ceiling.
        owner: Owner,
        /// What to do.
        advice: String,
    },
    /// Tools the operator's run does not have.
    #[error(
        "tools {extra} are not among {who} tools ({allowed}): ask for a subset of those; {advice}",
        who = owner.who()
    )]
    Tools {
        /// The tools asked beyond the ceiling, quoted.
        extra: String,
        /// The tools there are, quoted (`none` when none).
        allowed: String,
        /// Whose ceiling.
        owner: Owner,
        /// What to do.
        advice: String,
    },
    /// A switch the operator left off.
    #[error("{switch} is off for {who} runs, and a request cannot turn it on; {advice}", who = owner.who())]
    Switch {
        /// Which (`network`, `private networks`, `reasoning`).
        switch: &'static str,
        /// Whose ceiling.
        owner: Owner,
        /// What to do.
        advice: String,
    },
    /// Another provider endpoint or key than the operator's.
    #[error(
        "provider {asked} is not {who} provider ({ceiling}): leave the provider, URL and key out \
         of the request; {advice}",
        who = owner.who()
    )]
    Provider {
        /// The asked endpoint (kind and URL; never a key).
        asked: String,
        /// The operator's endpoint.
        ceiling: String,
        /// Whose ceiling.
        owner: Owner,
        /// What to do.
        advice: String,
    },
    /// A model the operator did not allow.
    #[error("model `{asked}` is not allowed: {who} runs may use {allowed}; {advice}", who = owner.who())]
    Model {
        /// The asked model.
        asked: String,
        /// The models allowed, quoted.
        allowed: String,
        /// Whose ceiling.
        owner: Owner,
        /// What to do.
        advice: String,
    },
    /// `max_tokens` above the operator's.
    #[error("max_tokens {asked} is above {who} ceiling of {ceiling}: ask for at most {ceiling}; {advice}", who = owner.who())]
    MaxTokens {
        /// Asked (`unlimited` when the request sets none).
        asked: String,
        /// The ceiling.
        ceiling: u32,
        /// Whose ceiling.
        owner: Owner,
        /// What to do.
        advice: String,
    },
    /// A workspace outside the operator's.
    #[error(
        "workspace {} is outside {who} workspace {}: give that directory or one below it",
        asked.display(), ceiling.display(), who = owner.who()
    )]
    Workspace {
        /// The asked directory.
        asked: PathBuf,
        /// The operator's workspace.
        ceiling: PathBuf,
        /// Whose ceiling.
        owner: Owner,
    },
    /// The asked workspace cannot be found.
    #[error("workspace {}: {reason}; give an existing directory at or below {}", asked.display(), ceiling.display())]
    WorkspaceUnreadable {
        /// The asked directory.
        asked: PathBuf,
        /// The operator's workspace.
        ceiling: PathBuf,
        /// Why it cannot be resolved.
        reason: String,
    },
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.who())
    }
}
