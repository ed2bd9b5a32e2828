//! `subagent-render-page`: renders one fetched HTML page for the worker's
//! `scrape_webpage`. The program is `subagent_tools::web::render_program`
//! (so the test suite's copy of this binary runs the same code).

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    subagent_tools::web::render_program::main()
}
