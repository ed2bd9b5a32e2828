//! What the web tools may reach, decided from the task before any tool
//! runs: the address policy (`ssrf.rs`: which addresses a fetch may
//! connect to) and the web part of the tool context (`context.rs`). Below
//! [`crate::tool`], so the tool context can hold it without the tool
//! module importing the web tools, which use the tool module.
//!
//! Must not fetch, search or resolve a name itself: the web tools do.

pub mod context;
pub mod ssrf;

pub use context::WebContext;
pub use ssrf::{AddressPolicy, RefusedAddress};
