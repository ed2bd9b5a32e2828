//! The suite's copy of `subagent-worker` (see `subagent_test_support::bins`).

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    subagent_worker::program::main()
}
