//! Workspace integration tests: one binary, suites in `suite/`.

mod suite;
