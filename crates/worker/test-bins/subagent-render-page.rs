//! This package's tests' copy of `subagent-render-page` (see
//! `subagent_test_support::bins`).

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    subagent_tools::web::render_program::main()
}
