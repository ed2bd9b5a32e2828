//! What `subagent config show` prints: every setting the config files and
//! the provider variables give, with where each came from, secrets masked.
//!
//! Keys are never shown: a key variable is reported as set (`***`) or not
//! set, and credentials inside a base URL are masked. Flags and agent files
//! are not part of it: they belong to one run, not to the configuration.

use subagent_protocol::ProviderKind;

use super::DEFAULT_MAX_CONCURRENT;
use super::load::LoadedConfig;
use super::provenance::{EnvLookup, Origin, Sourced, layer_origin, sourced};
use super::resolve::{DEFAULT_AGENT, kind_defaults, resolve_limits, subagents_switch};
use super::web::{WebSwitch, key_variable, kind_name, search_entry, web_switch};

/// The merged configuration: each setting with its value and origin.
pub fn describe_config(config: &LoadedConfig, env: EnvLookup<'_>) -> Vec<Sourced> {
    let mut out = Vec::new();
    let highest = |get: &dyn Fn(&super::file::ConfigFile) -> Option<String>| {
        config
            .layers()
            .rev()
            .find_map(|l| get(&l.file).map(|v| (v, layer_origin(config, &l.path))))
    };
    let (agent, origin) = highest(&|f| f.default_agent.clone())
        .unwrap_or_else(|| (DEFAULT_AGENT.to_owned(), Origin::Default));
    out.push(sourced("default_agent", &agent, origin));
    let (provider, origin) = highest(&|f| f.default_provider.clone()).unwrap_or_else(|| {
        (
            ProviderKind::OpenaiChat.as_str().to_owned(),
            Origin::Default,
        )
    });
    out.push(sourced("default_provider", &provider, origin));
    let (enabled, origin) = subagents_switch(config).unwrap_or((true, Origin::Default));
    out.push(sourced("subagents.enabled", &enabled.to_string(), origin));
    // The same rule as `resolve_run`: the highest file that sets it.
    let (max_concurrent, origin) = highest(&|f| f.max_concurrent.map(|n| n.to_string()))
        .unwrap_or_else(|| (DEFAULT_MAX_CONCURRENT.to_string(), Origin::Default));
    out.push(sourced("max_concurrent", &max_concurrent, origin));

    // Each name once, from the highest file that defines it.
    let mut names: Vec<&String> = config
        .layers()
        .flat_map(|l| l.file.providers.keys())
        .collect();
    names.sort();
    names.dedup();
    for name in names {
        let Some((entry, origin)) = config.layers().rev().find_map(|l| {
            l.file
                .providers
                .get(name)
                .map(|e| (e, layer_origin(config, &l.path)))
        }) else {
            continue;
        };
        let key = |field: &str| format!("providers.{name}.{field}");
        out.push(sourced(&key("kind"), entry.kind.as_str(), origin.clone()));
        if let Some(url) = &entry.base_url {
            out.push(sourced(
                &key("base_url"),
                &subagent_redact::mask_patterns(url),
                origin.clone(),
            ));
        }
        if let Some(model) = &entry.model {
            out.push(sourced(&key("model"), model, origin.clone()));
        }
        if let Some(var) = &entry.api_key_env {
            out.push(sourced(
                &key("api_key_env"),
                &key_state(var, env),
                origin.clone(),
            ));
        }
        if let Some(price) = &entry.price {
            out.push(sourced(
                &key("price"),
                &format!(
                    "input {} output {} cache_read {} cache_write {} ($/Mtok)",
                    price.input, price.output, price.cache_read, price.cache_write
                ),
                origin.clone(),
            ));
        }
    }

    let layers: Vec<_> = config
        .layers()
        .map(|l| (&l.file.limits, layer_origin(config, &l.path)))
        .collect();
    let (_, _, _, limits) = resolve_limits(&layers);
    out.extend(limits);

    match search_entry(config) {
        None => out.push(sourced("search", "none", Origin::Default)),
        Some((entry, origin)) => {
            out.push(sourced(
                "search.backend",
                kind_name(entry.kind),
                origin.clone(),
            ));
            out.push(sourced(
                "search.url",
                &subagent_redact::mask_patterns(&entry.url),
                origin.clone(),
            ));
            if let Some(var) = key_variable(entry) {
                out.push(sourced("search.api_key_env", &key_state(&var, env), origin));
            }
        }
    }
    for switch in WebSwitch::ALL {
        let (allow, origin) = web_switch(config, switch).unwrap_or((false, Origin::Default));
        out.push(sourced(switch.key(), &allow.to_string(), origin));
    }
    out.extend(raise_settings(config));
    out.extend(mcp_servers(config));

    for kind in [ProviderKind::OpenaiChat, ProviderKind::Anthropic] {
        let defaults = kind_defaults(kind);
        let url = env(defaults.base_url_var).map_or_else(
            || format!("not set (default {})", defaults.public_base_url),
            |u| subagent_redact::mask_patterns(&u).into_owned(),
        );
        out.push(sourced(
            &format!("env.{}", defaults.base_url_var),
            &url,
            Origin::Env(defaults.base_url_var.into()),
        ));
        let key = match env(defaults.api_key_var) {
            Some(_) => "set: ***",
            None => "not set",
        };
        out.push(sourced(
            &format!("env.{}", defaults.api_key_var),
            key,
            Origin::Env(defaults.api_key_var.into()),
        ));
    }
    out
}

/// `[serve]`: what callers may raise above the ceilings, and `[call]`:
/// the key variables a `call` payload may name, from the user config only;
/// a project's `[serve]` or `[call]` is shown as ignored.
fn raise_settings(config: &LoadedConfig) -> Vec<Sourced> {
    let (serve, call_keys, origin) = match &config.user {
        Some(layer) => (
            layer.file.serve.clone(),
            layer.file.call_key_variables.clone(),
            Origin::UserConfig(layer.path.clone()),
        ),
        None => (Default::default(), Vec::new(), Origin::Default),
    };
    let names: Vec<&str> = serve.allow_raise.iter().map(|r| r.name()).collect();
    let mut out = vec![
        sourced(
            "serve.allow_raise",
            &if names.is_empty() {
                "nothing (a command's own limits are the ceilings of its requests)".to_owned()
            } else {
                names.join(", ")
            },
            origin.clone(),
        ),
        sourced(
            "serve.allowed_models",
            &if serve.allowed_models.is_empty() {
                "only the command's own model".to_owned()
            } else {
                serve.allowed_models.join(", ")
            },
            origin.clone(),
        ),
        sourced(
            "call.allowed_api_key_env",
            &if call_keys.is_empty() {
                "only the provider kind's own variable and --api-key-env's".to_owned()
            } else {
                call_keys.join(", ")
            },
            origin,
        ),
    ];
    if let Some(project) = &config.project
        && !project.file.call_key_variables.is_empty()
    {
        out.push(sourced(
            "call",
            "ignored: only the user config may let call payloads name key variables",
            Origin::ProjectConfig(project.path.clone()),
        ));
    }
    if let Some(project) = &config.project
        && project.file.serve != Default::default()
    {
        out.push(sourced(
            "serve",
            "ignored: only the user config may let callers raise the ceilings",
            Origin::ProjectConfig(project.path.clone()),
        ));
    }
    out
}

/// `VAR (set: ***)` or `VAR (not set)`: never the key.
fn key_state(var: &str, env: EnvLookup<'_>) -> String {
    match env(var) {
        Some(_) => format!("{var} (set: ***)"),
        None => format!("{var} (not set)"),
    }
}

/// Each config file's MCP servers (the highest file's of a name): program,
/// arguments, the variables' names (never their values), timeouts and
/// whether it is enabled. A project's `.mcp.json` is no config.toml
/// layer and is not listed here.
fn mcp_servers(config: &LoadedConfig) -> Vec<Sourced> {
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for layer in config.layers().rev() {
        let origin = layer_origin(config, &layer.path);
        for entry in &layer.file.mcp_servers {
            if seen.contains(&entry.name.as_str()) {
                continue;
            }
            seen.push(&entry.name);
            let key = |field: &str| format!("mcp_servers.{}.{field}", entry.name);
            let mut command = entry.command.clone();
            for arg in &entry.args {
                command.push(' ');
                command.push_str(&subagent_redact::mask_patterns(arg));
            }
            out.push(sourced(&key("command"), &command, origin.clone()));
            let env: Vec<String> = entry
                .env
                .iter()
                .map(|(var, value)| match value {
                    crate::mcp::EnvValue::Passthrough => format!("{var} (passed through)"),
                    _ => format!("{var}=***"),
                })
                .collect();
            if !env.is_empty() {
                out.push(sourced(&key("env"), &env.join(", "), origin.clone()));
            }
            out.push(sourced(
                &key("timeouts"),
                &format!(
                    "startup {} ms, tool {} ms",
                    entry.startup_timeout_ms, entry.tool_timeout_ms
                ),
                origin.clone(),
            ));
            out.push(sourced(
                &key("enabled"),
                &entry.enabled.to_string(),
                origin.clone(),
            ));
        }
    }
    out
}
