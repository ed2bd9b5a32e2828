//! Configuration, parsed and decided: `config.toml` files (the user's and the project's), the
//! limit keys shared by flags, agent files and config, how one run's
//! settings are put together from all of them with the origin of each, and
//! project trust (a project's files count only once the operator trusted
//! them as they are).
//!
//! Also agents ([`agents`]): agent files and the catalog, which config and
//! trust decide about as much as they read them; MCP server entries
//! ([`mcp`]) and how their programs are resolved; the workspace settings
//! ([`WorkspaceIsolation`], [`ApplyMode`]) and the `[telemetry]` section
//! as written. Parsing and deciding only: it spawns nothing and depends on
//! no crate that does. Preparing a run from all of this is the
//! supervisor's (`subagent_supervisor::prepare`), and so is admitting a
//! request under the ceilings of [`RaiseSettings`]: a request carries
//! running things (a parent's layer view, a trace context).

#![forbid(unsafe_code)]

pub mod agents;
mod endpoint;
pub mod env_lookup;
mod file;
mod host_files;
mod key_variable;
mod limits;
mod load;
mod locations;
pub mod mcp;
mod path_trail;
mod project_files;
mod provenance;
mod raise;
mod read_caps;
mod resolve;
mod show;
mod telemetry_section;
mod trust;
mod trust_store;
mod web;
mod workspace_mode;

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

pub use endpoint::api_base_url;
pub use file::{
    BRAVE_DEFAULT_KEY_VAR, BRAVE_DEFAULT_URL, ConfigFile, ConfigFileError, DEFAULT_MAX_CONCURRENT,
    MAX_CONCURRENT_CEILING, ProviderEntry, SearchEntry, parse_config,
};
pub use host_files::{Admitted, HostFile, HostFileKind, HostFiles};
pub use key_variable::{KeyVariableProblem, check_key_variable};
pub use limits::{LimitKey, LimitSet, LimitUnit, LimitValue, RawLimit};
pub use load::{ConfigLayer, LoadedConfig, load_config};
pub use locations::{
    PROJECT_CONFIG, default_user_config_path, find_project_config, project_config_home,
    project_dirs, user_config_dir, user_config_path,
};
pub use project_files::{SkippedFile, md_files_in};
pub use provenance::{EnvLookup, Origin, ResolveError, Sourced};
pub use raise::{Raise, RaiseSettings};
pub use read_caps::{AGENT_FILE_CAP, CONFIG_FILE_CAP, PROJECT_FILES_CAP, TRUST_RECORD_CAP};
pub use resolve::{
    ConfiguredProvider, DEFAULT_AGENT, DEFAULT_MAX_DEPTH, KindDefaults, ResolvedRun, RunOverrides,
    kind_defaults, resolve_run,
};
pub use show::describe_config;
pub use telemetry_section::TelemetrySection;
#[cfg(test)]
pub(crate) use trust::read_project_trusting_all;
pub use trust::{Change, ProjectConfig, ProjectFile, ProjectFileKind, TrustVerdict, read_project};
pub use trust_store::{
    TRUST_FILE, TrustError, TrustRecords, TrustedFile, TrustedProject, default_trust_file_path,
    read_records, trust_file_path, write_records,
};
pub use workspace_mode::{ApplyMode, WorkspaceIsolation};
