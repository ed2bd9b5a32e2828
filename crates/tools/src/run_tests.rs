use std::path::PathBuf;
use std::time::Duration;

use pretty_assertions::assert_eq;

use super::*;
use crate::tool::{OutputCaps, ToolFuture, ToolOutput};

/// Echoes `{"text": ...}`, fails on `{"fail": ...}`, never ends on `{"hang": true}`.
struct Scripted;

impl Tool for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn description(&self) -> &str {
        "test tool"
    }
    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({"type": "object"})
    }
    fn call<'a>(&'a self, arguments: serde_json::Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            if let Some(text) = arguments.get("text").and_then(|t| t.as_str()) {
                return Ok(ToolOutput::text(text));
            }
            if let Some(message) = arguments.get("fail").and_then(|t| t.as_str()) {
                return Err(ToolError::Failed(message.to_owned()));
            }
            std::future::pending().await
        })
    }
}

fn ctx(timeout_ms: u64, max_lines: usize) -> ToolContext {
    let mut ctx = ToolContext::new(PathBuf::from("."));
    ctx.timeout = Duration::from_millis(timeout_ms);
    ctx.output_caps = OutputCaps {
        max_bytes: 1_000,
        max_lines,
    };
    ctx
}

#[tokio::test]
async fn output_is_capped_for_the_model() {
    let out = run_tool(&Scripted, r#"{"text": "a\nb\nc\nd\n"}"#, &ctx(1_000, 2)).await;
    assert_eq!(
        out,
        ToolCallOutput {
            output: "a\n[... 4 bytes / 2 lines omitted ...]\nd\n".to_owned(),
            is_error: false,
        }
    );
}

#[tokio::test]
async fn invalid_json_arguments_explain_the_parse_error() {
    let out = run_tool(&Scripted, r#"{"text": "#, &ctx(1_000, 10)).await;
    assert!(out.is_error);
    assert!(
        out.output
            .starts_with("invalid JSON arguments for tool `scripted`: EOF while parsing"),
        "{}",
        out.output
    );
    let out = run_tool(&Scripted, "[1]", &ctx(1_000, 10)).await;
    assert!(
        out.output.contains("expected a JSON object, got an array"),
        "{}",
        out.output
    );
}

#[tokio::test]
async fn a_failing_tool_returns_its_message_as_an_error_result() {
    let out = run_tool(&Scripted, r#"{"fail": "disk full"}"#, &ctx(1_000, 10)).await;
    assert_eq!(
        out,
        ToolCallOutput {
            output: "tool `scripted` failed: disk full".to_owned(),
            is_error: true,
        }
    );
}

#[tokio::test]
async fn a_tool_past_its_timeout_is_stopped_with_an_error_result() {
    let started = std::time::Instant::now();
    let out = run_tool(&Scripted, r#"{"hang": true}"#, &ctx(50, 10)).await;
    assert!(out.is_error);
    assert!(
        out.output
            .starts_with("tool `scripted` timed out after 50 ms"),
        "{}",
        out.output
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}
