//! The worker crate's integration tests, compiled into one binary:
//! `suite/` holds the test files (one per area), `support/` what they share
//! (the scripted loopback server, fixtures, shortcuts).

// The workspace's allow-*-in-tests settings cover `#[test]` functions only;
// the shared support code must fail just as loudly.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test support code fails loudly"
)]

mod support;

mod suite {
    mod loop_basic;
    mod loop_budget;
    mod loop_cancel;
    mod loop_mcp;
    mod loop_report_back;
    mod loop_resume;
    mod loop_support;
    mod provider_anthropic;
    mod provider_faults;
    mod provider_openai_chat;
    mod provider_openai_responses;
    mod provider_vertex;
    mod render_page;
    mod worker_process;
}
