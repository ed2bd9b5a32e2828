//! What an operator lets callers raise above the ceilings: the names of
//! `[serve] allow_raise = [...]` in the user's config.toml and of the
//! repeatable `--allow-raise NAME` flag, and the models a caller may pick
//! (`[serve] allowed_models`).
//!
//! Pure: names in, a typed [`Raise`] out, or a message listing the names
//! accepted. Whether a request stays under its ceilings is decided in
//! the supervisor's `request::Ceilings`, which reads these.

use std::fmt;

use super::limits::LimitKey;

/// One thing a caller may be allowed to raise above the operator's own
/// setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Raise {
    /// One limit or budget, by its config name (`timeout`, `max_cost`, ...).
    Limit(LimitKey),
    /// Tools beyond the operator's set.
    Tools,
    /// Network access for tool processes.
    Network,
    /// Loopback and private addresses for the web and network tools.
    PrivateNetworks,
    /// Link-local addresses (cloud metadata among them) for the same.
    LinkLocalNetworks,
    /// Another provider (kind, URL or key) than the operator's.
    Provider,
    /// Any model of the provider, not only the operator's and `allowed_models`.
    Model,
    /// `max_tokens` per turn above `--max-tokens`.
    MaxTokens,
    /// Reasoning (`think`) when `--reasoning` was not given.
    Reasoning,
}

/// The names that are not limits, in the order the error lists them.
const OTHER_NAMES: [(&str, Raise); 8] = [
    ("tools", Raise::Tools),
    ("network", Raise::Network),
    ("private_networks", Raise::PrivateNetworks),
    ("link_local_networks", Raise::LinkLocalNetworks),
    ("provider", Raise::Provider),
    ("model", Raise::Model),
    ("max_tokens", Raise::MaxTokens),
    ("reasoning", Raise::Reasoning),
];

impl Raise {
    /// The name as config and the flag spell it.
    pub fn name(self) -> &'static str {
        match self {
            Raise::Limit(key) => key.config_key(),
            other => OTHER_NAMES
                .iter()
                .find(|(_, r)| *r == other)
                .map_or("", |(name, _)| name),
        }
    }

    /// Reads one name (a limit's config name or camelCase name, or one of
    /// the others); the error lists every accepted name.
    pub fn parse(name: &str) -> Result<Self, String> {
        let name = name.trim();
        if let Some(key) = LimitKey::ALL
            .into_iter()
            .find(|k| k.config_key() == name || k.agent_key() == name)
        {
            return Ok(Raise::Limit(key));
        }
        if let Some((_, raise)) = OTHER_NAMES.iter().find(|(n, _)| *n == name) {
            return Ok(*raise);
        }
        let mut known: Vec<&str> = LimitKey::ALL.iter().map(|k| k.config_key()).collect();
        known.extend(OTHER_NAMES.iter().map(|(n, _)| *n));
        Err(format!(
            "`{name}` cannot be raised: name one of {}",
            known.join(", ")
        ))
    }
}

impl fmt::Display for Raise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `[serve]` of the user's config.toml: what callers of a server (and of
/// `call`, and of a batch with `--ceilings-from-flags`) may go beyond.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RaiseSettings {
    /// What callers may raise above the operator's setting.
    pub allow_raise: Vec<Raise>,
    /// Models of the operator's provider a caller may pick besides its own.
    pub allowed_models: Vec<String>,
}

impl RaiseSettings {
    /// True when `what` may be raised.
    pub fn allows(&self, what: Raise) -> bool {
        self.allow_raise.contains(&what)
    }

    /// These settings with `more` added (a flag's names over config's).
    pub fn with(mut self, more: impl IntoIterator<Item = Raise>) -> Self {
        for raise in more {
            if !self.allow_raise.contains(&raise) {
                self.allow_raise.push(raise);
            }
        }
        self
    }
}

impl RaiseSettings {
    /// These settings with `models` added to `allowed_models` (blank names skipped).
    pub fn with_models(mut self, models: impl IntoIterator<Item = String>) -> Self {
        for model in models {
            let model = model.trim().to_owned();
            if !model.is_empty() && !self.allowed_models.contains(&model) {
                self.allowed_models.push(model);
            }
        }
        self
    }
}
