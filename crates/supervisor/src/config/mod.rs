//! Configuration: `config.toml` files (the user's and the project's), the
//! limit keys shared by flags, agent files and config, and how one run's
//! settings are put together from all of them with the origin of each.
//!
//! Not here: the supervisor's own [`crate::SupervisorConfig`] (how children
//! are run), which is built from what this module resolves.

mod file;
mod limits;
mod load;
mod raise;
mod resolve;
mod show;
mod web;

#[cfg(test)]
#[path = "file_tests.rs"]
mod file_tests;
#[cfg(test)]
#[path = "limits_tests.rs"]
mod limits_tests;
#[cfg(test)]
#[path = "raise_tests.rs"]
mod raise_tests;
#[cfg(test)]
#[path = "resolve_tests.rs"]
mod resolve_tests;

pub use file::{
    BRAVE_DEFAULT_KEY_VAR, BRAVE_DEFAULT_URL, ConfigFile, ConfigFileError, ProviderEntry,
    SearchEntry, parse_config,
};
pub use limits::{LimitKey, LimitSet, LimitUnit, LimitValue, RawLimit};
pub use load::{
    ConfigLayer, LoadedConfig, PROJECT_CONFIG, default_user_config_path, find_project_config,
    load_config, project_config_home, user_config_dir, user_config_path,
};
pub use raise::{Raise, RaiseSettings};
pub use resolve::{
    DEFAULT_AGENT, DEFAULT_MAX_DEPTH, EnvLookup, KindDefaults, Origin, ResolveError, ResolvedRun,
    RunOverrides, Sourced, kind_defaults, resolve_run,
};
pub use show::describe_config;
