//! W3C trace context from a caller: the `traceparent` (and `tracestate`)
//! a run's root span becomes a child of, read from the environment
//! (`TRACEPARENT`, `TRACESTATE`), an MCP call's `_meta` or a stdio spawn.
//!
//! Parsing is the OpenTelemetry SDK's own propagator. A value that does
//! not parse is ignored (the run starts a trace of its own) with one
//! warning: telemetry never fails a run. Nothing here exports anything.

use std::collections::HashMap;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{SpanContext, TraceContextExt};
use opentelemetry_sdk::propagation::TraceContextPropagator;

/// The span a run's root span is a child of: the caller's, or the
/// `execute_tool` span of a nested run's parent.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceParent(pub(crate) SpanContext);

impl TraceParent {
    /// The context `traceparent` (with `tracestate`, if any) names, or
    /// `None` when it is not a valid W3C `traceparent`.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<Self> {
        let mut carrier = HashMap::new();
        carrier.insert("traceparent".to_owned(), traceparent.to_owned());
        if let Some(state) = tracestate {
            carrier.insert("tracestate".to_owned(), state.to_owned());
        }
        let context = TraceContextPropagator::new().extract(&carrier);
        let span = context.span().span_context().clone();
        span.is_valid().then_some(Self(span))
    }

    /// Like [`Self::parse`], but an invalid value is logged once as a
    /// warning naming `source` (where it came from) and ignored.
    pub fn parse_or_warn(
        source: &str,
        traceparent: &str,
        tracestate: Option<&str>,
    ) -> Option<Self> {
        let parsed = Self::parse(traceparent, tracestate);
        if parsed.is_none() {
            tracing::warn!(
                "ignoring {source}: `{}` is not a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>); the run starts a trace of its own",
                crate::terminal_text::strip_controls(subagent_protocol::text::prefix_bytes(
                    traceparent,
                    80
                ))
            );
        }
        parsed
    }

    /// `TRACEPARENT` and `TRACESTATE` of this process's environment, the
    /// OpenTelemetry convention for environment carriers.
    pub fn of_env() -> Option<Self> {
        let parent = std::env::var("TRACEPARENT")
            .ok()
            .filter(|v| !v.is_empty())?;
        let state = std::env::var("TRACESTATE").ok();
        Self::parse_or_warn("TRACEPARENT", &parent, state.as_deref())
    }

    /// The `traceparent` text of this context (for tests and logs).
    pub fn header(&self) -> String {
        format!(
            "00-{}-{}-{:02x}",
            self.0.trace_id(),
            self.0.span_id(),
            self.0.trace_flags().to_u8()
        )
    }
}

#[cfg(test)]
#[path = "carrier_tests.rs"]
mod tests;
