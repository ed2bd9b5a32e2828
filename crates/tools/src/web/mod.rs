//! The web tools: `search_web` (a configured search API) and
//! `scrape_webpage` (one page, read under the SSRF policy of [`ssrf`]).
//!
//! Both run in the worker, which has network for the model. Their output
//! goes through the same caps as every tool's.

pub mod decode;
pub mod fetch;
pub mod markdown;
pub mod render;
pub mod render_program;
pub mod scrape;
pub mod search;

#[cfg(test)]
mod test_server;

// The policy and context are `crate::web_policy`'s; under their old paths
// here too.
pub use crate::web_policy::WebContext;
pub use crate::web_policy::{AddressPolicy, RefusedAddress};
pub use crate::web_policy::{context, ssrf};
pub use markdown::{PageFormat, html_to_readable};
pub use render::{PageRenderer, RENDER_PAGE_PROGRAM};
pub use scrape::ScrapeWebpage;
pub use search::SearchWeb;
