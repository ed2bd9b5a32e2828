//! What the web tools get from the task: the search backend and the
//! address policy, taken once from [`WebSettings`] when the worker builds
//! the tool context.

use subagent_protocol::{SearchBackend, WebSettings};

use subagent_sandbox::net::ranges::Openers;

use super::ssrf::AddressPolicy;

/// The web tools' part of a [`crate::ToolContext`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WebContext {
    /// Where `search_web` searches; `None`: not configured.
    pub search: Option<SearchBackend>,
    /// Where `scrape_webpage` may connect.
    pub addresses: AddressPolicy,
}

// Every part compares exactly (the key by value); only the protocol type
// does not derive `Eq`.
impl Eq for WebContext {}

impl WebContext {
    /// The context a task's settings describe.
    pub fn from_settings(settings: &WebSettings) -> Self {
        Self {
            search: settings.search.clone(),
            addresses: AddressPolicy::opening(Openers {
                private_networks: settings.allow_private_networks,
                link_local_networks: settings.allow_link_local_networks,
            }),
        }
    }
}
