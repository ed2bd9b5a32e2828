//! The web tools' settings of one run: the search backend with its key,
//! and whether `scrape_webpage` may fetch private networks.
//!
//! `[search]` comes whole from the highest config file that has one (like
//! a `[providers.NAME]`, never half one file and half the other); its key
//! is read from the variable it names, and a Brave backend whose variable
//! is unset is refused here, naming the variable, before anything starts.
//! `allow_private_networks` is on when the flag or any config file's
//! `[web]` turns it on (highest file first). This module reads no file.

use subagent_protocol::{ApiKey, SearchBackend, SearchKind, WebSettings};

use super::file::{BRAVE_DEFAULT_KEY_VAR, SearchEntry};
use super::load::LoadedConfig;
use super::provenance::{EnvLookup, Origin, ResolveError, Sourced, layer_origin, sourced};

/// `[search]` of the highest config file that has one, with its origin.
pub(super) fn search_entry(config: &LoadedConfig) -> Option<(&SearchEntry, Origin)> {
    config.layers().rev().find_map(|l| {
        l.file
            .search
            .as_ref()
            .map(|s| (s, layer_origin(config, &l.path)))
    })
}

/// `[web] allow_private_networks` of the highest config file that sets it.
pub(super) fn private_networks_switch(config: &LoadedConfig) -> Option<(bool, Origin)> {
    config.layers().rev().find_map(|l| {
        l.file
            .web_allow_private_networks
            .map(|allow| (allow, layer_origin(config, &l.path)))
    })
}

/// The variable that holds `entry`'s key, if its API takes one.
pub(super) fn key_variable(entry: &SearchEntry) -> Option<String> {
    match (entry.kind, &entry.api_key_env) {
        (_, Some(var)) => Some(var.clone()),
        (SearchKind::Brave, None) => Some(BRAVE_DEFAULT_KEY_VAR.to_owned()),
        (SearchKind::Searxng, None) => None,
    }
}

/// Short name of a search API, as config files write it.
pub(super) fn kind_name(kind: SearchKind) -> &'static str {
    match kind {
        SearchKind::Searxng => "searxng",
        SearchKind::Brave => "brave",
    }
}

/// The run's web settings; `flag_allows_private` is
/// `--allow-private-networks`. Sources go to `sources` (keys masked).
pub(super) fn resolve_web(
    config: &LoadedConfig,
    flag_allows_private: bool,
    env: EnvLookup<'_>,
    sources: &mut Vec<Sourced>,
) -> Result<WebSettings, ResolveError> {
    let search = match search_entry(config) {
        None => {
            sources.push(sourced("search", "none", Origin::Default));
            None
        }
        Some((entry, origin)) => {
            sources.push(sourced(
                "search.backend",
                kind_name(entry.kind),
                origin.clone(),
            ));
            sources.push(sourced(
                "search.url",
                &subagent_redact::mask_patterns(&entry.url),
                origin.clone(),
            ));
            let api_key = match key_variable(entry) {
                None => None,
                Some(var) => match env(&var) {
                    Some(value) => {
                        sources.push(sourced(
                            "search.api_key",
                            &format!("*** (from {var})"),
                            origin.clone(),
                        ));
                        Some(ApiKey::new(value))
                    }
                    None => return Err(ResolveError::SearchKeyUnset { var, origin }),
                },
            };
            Some(SearchBackend {
                kind: entry.kind,
                url: entry.url.clone(),
                api_key,
            })
        }
    };
    let (allow_private_networks, origin) = if flag_allows_private {
        (true, Origin::Flag("--allow-private-networks".into()))
    } else {
        private_networks_switch(config).unwrap_or((false, Origin::Default))
    };
    sources.push(sourced(
        "web.allow_private_networks",
        &allow_private_networks.to_string(),
        origin,
    ));
    Ok(WebSettings {
        search,
        allow_private_networks,
    })
}

#[cfg(test)]
#[path = "web_tests.rs"]
mod tests;
