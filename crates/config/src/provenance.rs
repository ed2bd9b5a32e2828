//! Where each resolved setting came from ([`Origin`], [`Sourced`]), how
//! variables are read ([`EnvLookup`]), and why resolving fails
//! ([`ResolveError`]): shared by the run's settings
//! ([`super::resolve`]), its web settings ([`super::web`]) and
//! `subagent config show`, below all three.
//!
//! Types and two constructors only; it reads nothing and decides nothing.

use std::fmt;
use std::path::PathBuf;

use super::key_variable::KeyVariableProblem;
use super::load::LoadedConfig;
use crate::agents::AgentSource;

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Built into this binary.
    Default,
    /// An environment variable.
    Env(String),
    /// The user's config file.
    UserConfig(PathBuf),
    /// The project's config file.
    ProjectConfig(PathBuf),
    /// The agent's definition (its file, or a built-in agent).
    Agent(AgentSource),
    /// A command-line flag.
    Flag(String),
    /// A field of the request a caller sent (`subagent call`'s stdin JSON).
    RequestField(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::Env(var) => write!(f, "env {var}"),
            Origin::UserConfig(path) => write!(f, "user config {}", path.display()),
            Origin::ProjectConfig(path) => write!(f, "project config {}", path.display()),
            Origin::Agent(AgentSource::BuiltIn) => f.write_str("built-in agent"),
            Origin::Agent(AgentSource::File(path)) => write!(f, "agent file {}", path.display()),
            Origin::Flag(flag) => write!(f, "flag {flag}"),
            Origin::RequestField(field) => write!(f, "the request's field {field}"),
        }
    }
}

/// Why a run's settings cannot be put together.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// A provider name that is neither configured nor a kind.
    #[error(
        "provider `{name}` (from {origin}) is not configured and is not a provider kind; \
         configured: {configured}; kinds: openai-chat, openai-responses, anthropic, vertexai-anthropic \
         (`subagent config show` lists the configuration)"
    )]
    UnknownProvider {
        /// The name.
        name: String,
        /// Who named it.
        origin: Origin,
        /// The configured names, comma-separated, or `none`.
        configured: String,
    },
    /// No model anywhere.
    #[error(
        "no model: pass --model, or set `model:` in the agent file, or `model = \"...\"` in a \
         [providers.NAME] of .subagent/config.toml or ~/.config/subagent/config.toml \
         (`subagent config path` shows where)"
    )]
    NoModel,
    /// A variable named for the key is not set.
    #[error(
        "the API key variable named by {origin}: {var} is not set; export it, or name a \
         variable that is set there"
    )]
    KeyVariableUnset {
        /// The variable.
        var: String,
        /// Who named it.
        origin: Origin,
    },
    /// `--api-key-env` (or a request's key variable) is a key, or no
    /// variable name; the message does not repeat it.
    #[error("{}", .problem.message(&.origin.to_string(), "OPENAI_API_KEY"))]
    BadKeyVariable {
        /// Who gave it.
        origin: Origin,
        /// What is wrong with it.
        problem: KeyVariableProblem,
    },
    /// The search backend's key variable is not set.
    #[error(
        "the search API key variable {var} (for [search] in {origin}) is not set; export it, \
         or name another variable with `api_key_env` in [search]"
    )]
    SearchKeyUnset {
        /// The variable.
        var: String,
        /// The config file whose `[search]` needs it.
        origin: Origin,
    },
}

/// One setting's value as shown to an operator, and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced {
    /// The setting (`model`, `limits.timeout`, ...).
    pub key: String,
    /// The value as written in a config file (secrets masked).
    pub value: String,
    /// Where it came from.
    pub origin: Origin,
}

pub use crate::env_lookup::EnvLookup;

/// The origin of the layer read from `path`.
pub(super) fn layer_origin(config: &LoadedConfig, path: &std::path::Path) -> Origin {
    match &config.project {
        Some(p) if p.path == path => Origin::ProjectConfig(path.to_owned()),
        _ => Origin::UserConfig(path.to_owned()),
    }
}

pub(super) fn sourced(key: &str, value: &str, origin: Origin) -> Sourced {
    Sourced {
        key: key.to_owned(),
        value: value.to_owned(),
        origin,
    }
}
