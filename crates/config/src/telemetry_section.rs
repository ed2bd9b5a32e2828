//! `[telemetry]` of the user's config file as written: what it asks for.
//! Resolving it against the OpenTelemetry environment variables is the
//! supervisor's telemetry module's.

/// `[telemetry]` of the user's config file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TelemetrySection {
    /// `enabled`: false turns telemetry off; true turns it on with the
    /// default endpoint when none is named.
    pub enabled: Option<bool>,
    /// `endpoint`: the collector's base URL (`/v1/traces` is appended).
    pub endpoint: Option<String>,
    /// `protocol`: `http/protobuf` or `http/json`.
    pub protocol: Option<String>,
    /// `service_name`: the `service.name` of the spans.
    pub service_name: Option<String>,
    /// `include_content`: export tasks, answers, tool arguments and
    /// results, masked for secrets (off by default).
    pub include_content: Option<bool>,
    /// `queue_spans`: the export queue's bound.
    pub queue_spans: Option<usize>,
}
