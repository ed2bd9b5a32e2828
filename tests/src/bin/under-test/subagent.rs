//! The suite's copy of `subagent` (see `subagent_test_support::bins`).

#![forbid(unsafe_code)]

fn main() {
    subagent_cli::main()
}
