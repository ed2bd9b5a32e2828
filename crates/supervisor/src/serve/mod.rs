//! The servers that hand runs to another program over stdin and stdout:
//! `serve --stdio`, JSON lines with ids ([`stdio`], its wire format in
//! [`protocol`], its bounded pipes in `io`). A server's own settings are
//! the defaults and ceilings of every run it starts ([`defaults`]).
//!
//! Declares and re-exports only.

pub mod defaults;
mod io;
pub mod protocol;
pub mod stdio;

pub use defaults::{Report, ServeDefaults, SpawnError, WarningSink, error_chain};
pub use stdio::{ServeError, StdioOptions, StdioServer};
