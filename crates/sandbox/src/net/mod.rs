//! The network of tool processes when the operator turned it on: a
//! private network namespace per run, reaching the outside through a
//! user-mode stack (slirp4netns or pasta), with loopback, link-local, private and special
//! ranges refused by its routing rules, from the one table of ranges
//! ([`ranges`]) that `scrape_webpage`'s guard reads too.
//!
//! - [`ranges`]: the table (range, reason, the flag that opens it).
//! - [`netlink`]: the rtnetlink requests (lo up, rules), sent in-child.
//! - [`holder`]: the process owning the namespaces for the run.
//! - [`stack`]: which stack a run gets, and starting it.
//! - [`slirp`]: starting and stopping slirp4netns (preferred: lighter).
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

pub use pasta::{DNS_FORWARD_V4, DNS_FORWARD_V6};
pub mod slirp;
pub mod stack;

pub use private::{
    NetworkError, NetworkOptions, PrivateNetwork, network_stack, network_stack_found,
    network_stack_kind,
};
pub use stack::{
    STACK_INSTALL_HINT, STACK_VARIABLE, Stack, StackKind, current_stack, current_stack_for,
    find_stack,
};
