//! The subagent worker: runs one subagent's agent loop against an LLM
//! provider and reports to the supervisor over fd 3.
//!
//! - [`agent`]: the loop itself ([`agent::run_task`]), budgets, structured
//!   output, tool calls;
//! - [`provider`]: the streaming LLM clients behind one trait;
//! - [`protocol_io`]: the fd-3 handshake, frame reader and writer;
//! - [`subagent_calls`]: `subagent` tool calls sent to the supervisor and
//!   their replies routed back;
//! - [`exit_code`]: how the process ends.
//!
//! The worker never prints to stdout (a captured pipe) and never reads its
//! API key from the environment: it arrives inside the `TaskSpec`.

// One unsafe call, marked where it is: adopting the inherited fd 3.
#![deny(unsafe_code)]

pub mod agent;
pub mod exit_code;
pub mod harden;
pub mod outbox;
pub mod program;
pub mod protocol_io;
pub mod provider;
pub mod subagent_calls;
