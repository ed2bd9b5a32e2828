//! The network of tool processes when the operator turned it on: a
//! private network namespace per run, reaching the outside through a
//! user-mode stack (pasta), with loopback, link-local, private and special
//! ranges refused by its routing rules, from the one table of ranges
//! ([`ranges`]) that `scrape_webpage`'s guard reads too.
//!
//! - [`ranges`]: the table (range, reason, the flag that opens it).
//! - [`netlink`]: the rtnetlink requests (lo up, rules), sent in-child.
//! - [`holder`]: the process owning the namespaces for the run.
//! - [`pasta`]: starting and stopping pasta.
//! - [`private`]: the run's handle tying them together.
//!
//! A tool call joins the holder's user and network namespaces before it
//! makes its own (`isolation::namespaces`), so it holds no capability
//! over the network namespace and cannot change its rules.

pub(crate) mod holder;
pub(crate) mod netlink;
pub mod pasta;
pub mod private;
pub mod ranges;

pub use pasta::{PASTA_INSTALL_HINT, find_pasta, pasta_version};
pub use private::{
    DNS_FORWARD_V4, DNS_FORWARD_V6, NetworkError, NetworkOptions, PrivateNetwork, network_stack,
    network_stack_found,
};
