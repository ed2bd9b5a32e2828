//! The web tools' settings of one run: the search backend with its key,
//! and which non-public ranges `scrape_webpage` and tool processes with
//! the network on may reach.
//!
//! `[search]` comes whole from the highest config file that has one (like
//! a `[providers.NAME]`, never half one file and half the other); its key
//! is read from the variable it names, and a Brave backend whose variable
//! is unset is refused here, naming the variable, before anything starts.
//! `allow_private_networks` and `allow_link_local_networks` are each on
//! when its flag is given or else when the highest config file that sets
//! it in `[web]` turns it on. This module reads no file.

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

/// The `[web]` switches that open ranges, with their keys and flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WebSwitch {
    /// `allow_private_networks`.
    PrivateNetworks,
    /// `allow_link_local_networks`.
    LinkLocalNetworks,
}

impl WebSwitch {
    /// Both, in the order `config show` lists them.
    pub(super) const ALL: [WebSwitch; 2] =
        [WebSwitch::PrivateNetworks, WebSwitch::LinkLocalNetworks];

    /// The key `config show` prints.
    pub(super) fn key(self) -> &'static str {
        match self {
            WebSwitch::PrivateNetworks => "web.allow_private_networks",
            WebSwitch::LinkLocalNetworks => "web.allow_link_local_networks",
        }
    }

    fn flag(self) -> &'static str {
        match self {
            WebSwitch::PrivateNetworks => "--allow-private-networks",
            WebSwitch::LinkLocalNetworks => "--allow-link-local-networks",
        }
    }

    fn in_file(self, file: &super::file::ConfigFile) -> Option<bool> {
        match self {
            WebSwitch::PrivateNetworks => file.web_allow_private_networks,
            WebSwitch::LinkLocalNetworks => file.web_allow_link_local_networks,
        }
    }
}

/// The flags of a run that open ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct WebFlags {
    /// `--allow-private-networks`.
    pub(super) private_networks: bool,
    /// `--allow-link-local-networks`.
    pub(super) link_local_networks: bool,
}

/// `switch` of the highest config file that sets it.
pub(super) fn web_switch(config: &LoadedConfig, switch: WebSwitch) -> Option<(bool, Origin)> {
    config.layers().rev().find_map(|l| {
        switch
            .in_file(&l.file)
            .map(|allow| (allow, layer_origin(config, &l.path)))
    })
}

/// `switch` for a run: on by its flag, else as the highest file says.
fn resolve_switch(
    config: &LoadedConfig,
    switch: WebSwitch,
    flag_given: bool,
    sources: &mut Vec<Sourced>,
) -> bool {
    let (allow, origin) = if flag_given {
        (true, Origin::Flag(switch.flag().into()))
    } else {
        web_switch(config, switch).unwrap_or((false, Origin::Default))
    };
    sources.push(sourced(switch.key(), &allow.to_string(), origin));
    allow
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

/// The run's web settings; `flags` are the run's flags that open ranges.
/// Sources go to `sources` (keys masked).
pub(super) fn resolve_web(
    config: &LoadedConfig,
    flags: WebFlags,
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
    let allow_private_networks = resolve_switch(
        config,
        WebSwitch::PrivateNetworks,
        flags.private_networks,
        sources,
    );
    let allow_link_local_networks = resolve_switch(
        config,
        WebSwitch::LinkLocalNetworks,
        flags.link_local_networks,
        sources,
    );
    Ok(WebSettings {
        search,
        allow_private_networks,
        allow_link_local_networks,
    })
}

#[cfg(test)]
#[path = "web_tests.rs"]
mod tests;
