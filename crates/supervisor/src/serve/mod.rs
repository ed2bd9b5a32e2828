//! The servers that hand runs to another program over stdin and stdout:
//! `serve --stdio`, JSON lines with ids ([`stdio`], its wire format in
//! [`protocol`], its bounded pipes in `io`), and `serve --mcp`, the Model
//! Context Protocol ([`mcp`]: its tools, progress and bounded transport).
//! Both read a request to start runs with one parser ([`spawn`]).
//! A server's own settings are the defaults and ceilings of every run it
//! starts ([`defaults`]).
//!
//! Declares and re-exports only.

pub mod defaults;
mod io;
pub mod mcp;
pub mod protocol;
pub mod spawn;
pub mod stdio;

pub use defaults::{Report, ServeDefaults, SpawnError, WarningSink, error_chain};
pub use mcp::{McpServe, McpServeError};
pub use stdio::{ServeError, StdioOptions, StdioServer};
