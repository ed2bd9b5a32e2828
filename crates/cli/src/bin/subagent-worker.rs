//! `subagent-worker`: the process the supervisor spawns for one subagent.
//! The program is `subagent_worker::program` (so the test suite's copy of
//! this binary runs the same code).

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    subagent_worker::program::main()
}
