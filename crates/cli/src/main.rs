//! `subagent`: run LLM subagents as sandboxed, resource-capped workers.
//! The program is `subagent_cli::main` (so the test suite's copy of this
//! binary runs the same code).

#![forbid(unsafe_code)]

fn main() {
    subagent_cli::main()
}
