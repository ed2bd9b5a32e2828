//! One run's settings from every place that can set them, each value with
//! where it came from.
//!
//! Precedence, highest first: the `subagent run` flag; the agent file; the
//! project config; the user config; the provider's environment variables
//! (`OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`, ...); the built-in default. A
//! `[providers.NAME]` in the project config replaces the user's entry of
//! that name as a whole, so an entry is never half one file and half the
//! other.
//!
//! In: the flags ([`RunOverrides`]), the config files, the catalog and a
//! way to read variables. Out: a [`ResolvedRun`] or a [`ResolveError`] that
//! says what to set. It reads no file and starts nothing. An unknown agent
//! name is not an error here: the supervisor's admission refuses it with
//! UNKNOWN_AGENT and the list of agents, as for every caller.

use subagent_protocol::usage::ModelPrice;
use subagent_protocol::{ApiKey, Budget, Limits, ProviderKind, ProviderSpec, WebSettings};

use super::file::ProviderEntry;
use super::key_variable::check_key_variable;
use super::limits::{LimitKey, LimitSet, LimitValue};
use super::load::LoadedConfig;
use super::provenance::{EnvLookup, Origin, ResolveError, Sourced, layer_origin, sourced};
use crate::agents::{AgentCatalog, AgentDefinition};

/// The agent a run gets when nothing names one.
pub const DEFAULT_AGENT: &str = "general";

/// The deepest nesting when nothing sets `max_depth`: 1, no nesting.
pub const DEFAULT_MAX_DEPTH: u32 = 1;

/// The values of the run's flags that were given (`None`: not given).
/// Hashable: a batch prepares each distinct set once.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct RunOverrides {
    /// `--agent`.
    pub agent: Option<String>,
    /// `--provider`: a configured provider's name or a kind.
    pub provider: Option<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--api-key-env`.
    pub api_key_env: Option<String>,
    /// Who named `api_key_env` when it was not the flag (`subagent call`'s
    /// `api_key_name`), so an unset variable is blamed on the right place.
    pub api_key_env_origin: Option<Origin>,
    /// The limit flags that were given.
    pub limits: LimitSet,
    /// `--allow-private-networks` was given.
    pub allow_private_networks: bool,
    /// `--allow-link-local-networks` was given.
    pub allow_link_local_networks: bool,
}

/// Everything a run needs from its settings.
#[derive(Debug, Clone)]
pub struct ResolvedRun {
    /// The agent's name.
    pub agent: String,
    /// The provider, with its key when one is set.
    pub provider: ProviderSpec,
    /// The process limits.
    pub limits: Limits,
    /// Turns and cost.
    pub budget: Budget,
    /// Deepest nesting.
    pub max_depth: u32,
    /// `Some(why)` when config switches subagents off.
    pub subagents_disabled: Option<String>,
    /// `max_concurrent` of the highest config file that sets it.
    pub max_concurrent: Option<usize>,
    /// The web tools' search backend and address policy.
    pub web: WebSettings,
    /// Each setting with its origin, for `config show` and diagnostics.
    pub sources: Vec<Sourced>,
    /// The `[providers.NAME]` entry the provider is, when it is one.
    pub configured_provider: Option<ConfiguredProvider>,
}

/// A provider of a config file (`[providers.NAME]`), as the run chose it:
/// the operator's, with its URL and key variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfiguredProvider {
    /// Its name.
    pub name: String,
    /// Its `base_url`, as the file writes it.
    pub base_url: Option<String>,
    /// Its `api_key_env`.
    pub api_key_env: Option<String>,
}

/// Public endpoint and variables of a provider kind: what the kind's own
/// SDKs read, so a shell set up for them needs no config here.
pub struct KindDefaults {
    /// Variable holding the key.
    pub api_key_var: &'static str,
    /// Variable holding the base URL.
    pub base_url_var: &'static str,
    /// The public endpoint.
    pub public_base_url: &'static str,
}

/// The defaults of `kind`.
pub fn kind_defaults(kind: ProviderKind) -> KindDefaults {
    match kind {
        ProviderKind::OpenaiChat | ProviderKind::OpenaiResponses => KindDefaults {
            api_key_var: "OPENAI_API_KEY",
            base_url_var: "OPENAI_BASE_URL",
            public_base_url: "https://api.openai.com/v1",
        },
        ProviderKind::Anthropic => KindDefaults {
            api_key_var: "ANTHROPIC_API_KEY",
            base_url_var: "ANTHROPIC_BASE_URL",
            public_base_url: "https://api.anthropic.com/v1",
        },
        // The location URL is built from the Anthropic Vertex SDK's
        // CLOUD_ML_REGION and ANTHROPIC_VERTEX_PROJECT_ID (vertex_location_url);
        // the key is an access token (`gcloud auth print-access-token`).
        ProviderKind::VertexaiAnthropic => KindDefaults {
            api_key_var: "GOOGLE_OAUTH_ACCESS_TOKEN",
            base_url_var: "ANTHROPIC_VERTEX_BASE_URL",
            public_base_url: "",
        },
    }
}

/// The public Vertex AI location URL from the Anthropic Vertex SDK's
/// variables, when both are set.
fn vertex_location_url(env: EnvLookup<'_>) -> Option<String> {
    let region = env("CLOUD_ML_REGION")?;
    let project = env("ANTHROPIC_VERTEX_PROJECT_ID")?;
    Some(format!(
        "https://{region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}"
    ))
}

/// The provider chosen for a run, before the model and key.
struct ChosenProvider {
    kind: ProviderKind,
    /// The entry, with its name, when the provider is a configured one.
    entry: Option<(ProviderEntry, Origin)>,
    name: Option<String>,
    sourced: Option<Sourced>,
}

/// Puts one run's settings together.
pub fn resolve_run(
    flags: &RunOverrides,
    config: &LoadedConfig,
    catalog: &AgentCatalog,
    env: EnvLookup<'_>,
) -> Result<ResolvedRun, ResolveError> {
    if let Some(var) = &flags.api_key_env {
        check_key_variable(var).map_err(|problem| ResolveError::BadKeyVariable {
            origin: Origin::Flag("--api-key-env".into()),
            problem,
        })?;
    }
    let mut sources = Vec::new();
    // Highest layer first.
    let project = config.project.as_ref();
    let user = config.user.as_ref();
    let file_layers = || {
        project
            .map(|l| (&l.file, Origin::ProjectConfig(l.path.clone())))
            .into_iter()
            .chain(user.map(|l| (&l.file, Origin::UserConfig(l.path.clone()))))
    };

    let (agent_name, agent_origin) = match &flags.agent {
        Some(name) => (name.clone(), Origin::Flag("--agent".into())),
        None => file_layers()
            .find_map(|(f, o)| f.default_agent.clone().map(|a| (a, o)))
            .unwrap_or_else(|| (DEFAULT_AGENT.to_owned(), Origin::Default)),
    };
    sources.push(sourced("agent", &agent_name, agent_origin));
    let agent = catalog.get(&agent_name);
    let agent_origin = |a: &AgentDefinition| Origin::Agent(a.source.clone());

    let chosen = choose_provider(flags, config, agent)?;
    if let Some(s) = chosen.sourced.clone() {
        sources.push(s);
    }
    let defaults = kind_defaults(chosen.kind);
    let entry = chosen.entry.as_ref();

    let (base_url, origin) = if let Some(url) = &flags.base_url {
        (url.clone(), Origin::Flag("--base-url".into()))
    } else if let Some((url, origin)) =
        entry.and_then(|(e, o)| e.base_url.clone().map(|u| (u, o.clone())))
    {
        (url, origin)
    } else if let Some(url) = env(defaults.base_url_var) {
        (url, Origin::Env(defaults.base_url_var.into()))
    } else if let Some(url) = (chosen.kind == ProviderKind::VertexaiAnthropic)
        .then(|| vertex_location_url(env))
        .flatten()
    {
        (url, Origin::Env("CLOUD_ML_REGION".into()))
    } else {
        (defaults.public_base_url.to_owned(), Origin::Default)
    };
    let base_url = super::endpoint::api_base_url(chosen.kind, &base_url);
    sources.push(sourced(
        "base_url",
        &subagent_redact::mask_patterns(&base_url),
        origin,
    ));

    let (model, origin) = if let Some(model) = &flags.model {
        (model.clone(), Origin::Flag("--model".into()))
    } else if let Some((model, origin)) =
        agent.and_then(|a| a.model.clone().map(|m| (m, agent_origin(a))))
    {
        (model, origin)
    } else if let Some((model, origin)) =
        entry.and_then(|(e, o)| e.model.clone().map(|m| (m, o.clone())))
    {
        (model, origin)
    } else {
        return Err(ResolveError::NoModel);
    };
    sources.push(sourced("model", &model, origin));

    // A variable someone named must be set; the kind's usual one may not be.
    let (key_var, origin, required) = if let Some(var) = &flags.api_key_env {
        let origin = flags
            .api_key_env_origin
            .clone()
            .unwrap_or_else(|| Origin::Flag("--api-key-env".into()));
        (var.clone(), origin, true)
    } else if let Some((var, origin)) =
        entry.and_then(|(e, o)| e.api_key_env.clone().map(|v| (v, o.clone())))
    {
        (var, origin, true)
    } else {
        (defaults.api_key_var.to_owned(), Origin::Default, false)
    };
    let api_key = match env(&key_var) {
        Some(value) => {
            sources.push(sourced("api_key", &format!("*** (from {key_var})"), origin));
            Some(ApiKey::new(value))
        }
        None if required => {
            return Err(ResolveError::KeyVariableUnset {
                var: key_var,
                origin,
            });
        }
        None => {
            sources.push(sourced(
                "api_key",
                &format!("none ({key_var} is not set)"),
                origin,
            ));
            None
        }
    };
    let price: Option<ModelPrice> = entry.and_then(|(e, _)| e.price);

    let mut layers: Vec<(&LimitSet, Origin)> = file_layers()
        .map(|(file, origin)| (&file.limits, origin))
        .collect();
    layers.reverse();
    if let Some(a) = agent {
        layers.push((&a.limits, agent_origin(a)));
    }
    layers.push((&flags.limits, Origin::Flag(String::new())));
    let (limits, budget, max_depth, limit_sources) = resolve_limits(&layers);
    sources.extend(limit_sources);

    let subagents_disabled = subagents_switch(config).and_then(|(enabled, origin)| {
        (!enabled).then(|| {
            format!("subagents are switched off by {origin} (`[subagents] enabled = false`); set it to true or remove it to run them")
        })
    });

    let web_flags = super::web::WebFlags {
        private_networks: flags.allow_private_networks,
        link_local_networks: flags.allow_link_local_networks,
    };
    let web = super::web::resolve_web(config, web_flags, env, &mut sources)?;

    Ok(ResolvedRun {
        agent: agent_name,
        provider: ProviderSpec {
            kind: chosen.kind,
            base_url,
            model,
            api_key,
            temperature: None,
            max_tokens: None,
            reasoning: false,
            price,
        },
        limits,
        budget,
        max_depth,
        subagents_disabled,
        max_concurrent: config
            .layers()
            .rev()
            .find_map(|layer| layer.file.max_concurrent),
        web,
        sources,
        configured_provider: chosen.name.clone().zip(chosen.entry.as_ref()).map(
            |(name, (entry, _))| ConfiguredProvider {
                name,
                base_url: entry.base_url.clone(),
                api_key_env: entry.api_key_env.clone(),
            },
        ),
    })
}

/// `[subagents] enabled` of the highest config file that sets it.
pub(super) fn subagents_switch(config: &LoadedConfig) -> Option<(bool, Origin)> {
    config.layers().rev().find_map(|l| {
        l.file
            .subagents_enabled
            .map(|enabled| (enabled, layer_origin(config, &l.path)))
    })
}

/// Limits, budget and depth from `layers` (lowest first) over the
/// defaults, with the origin of every key. An origin of `Flag("")` stands
/// for "each key's own flag".
pub(super) fn resolve_limits(
    layers: &[(&LimitSet, Origin)],
) -> (Limits, Budget, u32, Vec<Sourced>) {
    let mut limits = Limits::default();
    let mut budget = Budget::default();
    let mut max_depth = DEFAULT_MAX_DEPTH;
    for (set, _) in layers {
        set.apply(&mut limits, &mut budget, &mut max_depth);
    }
    let sources = LimitKey::ALL
        .into_iter()
        .map(|key| {
            let origin = layers
                .iter()
                .rev()
                .find(|(set, _)| set.get(key).is_some())
                .map_or(Origin::Default, |(_, origin)| match origin {
                    Origin::Flag(_) => Origin::Flag(key.flag()),
                    other => other.clone(),
                });
            let value = key
                .value_in(&limits, &budget, max_depth)
                .map_or_else(|| "unlimited".to_owned(), |v: LimitValue| v.to_string());
            sourced(&format!("limits.{}", key.config_key()), &value, origin)
        })
        .collect();
    (limits, budget, max_depth, sources)
}

/// The provider named by the flag, the agent, or the config's
/// `default_provider`, looked up among the configured ones (project first)
/// and then as a kind; openai-chat when nothing names one.
fn choose_provider(
    flags: &RunOverrides,
    config: &LoadedConfig,
    agent: Option<&AgentDefinition>,
) -> Result<ChosenProvider, ResolveError> {
    let named = if let Some(name) = &flags.provider {
        Some((name.clone(), Origin::Flag("--provider".into())))
    } else if let Some(a) = agent.filter(|a| a.provider.is_some()) {
        a.provider
            .clone()
            .map(|p| (p, Origin::Agent(a.source.clone())))
    } else {
        config.layers().rev().find_map(|l| {
            l.file
                .default_provider
                .clone()
                .map(|p| (p, layer_origin(config, &l.path)))
        })
    };
    let Some((name, origin)) = named else {
        return Ok(ChosenProvider {
            kind: ProviderKind::OpenaiChat,
            entry: None,
            name: None,
            sourced: Some(sourced("provider", "openai-chat", Origin::Default)),
        });
    };
    let configured = config.layers().rev().find_map(|l| {
        l.file
            .providers
            .get(&name)
            .map(|e| (e.clone(), layer_origin(config, &l.path)))
    });
    if let Some((entry, entry_origin)) = configured {
        return Ok(ChosenProvider {
            kind: entry.kind,
            sourced: Some(sourced(
                "provider",
                &format!("{name} ({})", entry.kind),
                origin,
            )),
            entry: Some((entry, entry_origin)),
            name: Some(name),
        });
    }
    match name.parse::<ProviderKind>() {
        Ok(kind) => Ok(ChosenProvider {
            kind,
            entry: None,
            name: None,
            sourced: Some(sourced("provider", kind.as_str(), origin)),
        }),
        Err(_) => {
            let mut names: Vec<&str> = config
                .layers()
                .flat_map(|l| l.file.providers.keys().map(String::as_str))
                .collect();
            names.sort_unstable();
            names.dedup();
            Err(ResolveError::UnknownProvider {
                name,
                origin,
                configured: if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                },
            })
        }
    }
}
