//! `subagent`: run LLM subagents as sandboxed, resource-capped workers.
//!
//! Thin binary: argument parsing and wiring only; everything else is in the
//! `subagent_supervisor` library.

mod cli;

fn main() {
    std::process::exit(cli::main());
}
