//! Whether and where traces go: the OpenTelemetry environment variables
//! over the user config's `[telemetry]` section, resolved once.
//!
//! Telemetry is off unless an endpoint is named (an OTLP variable or
//! `[telemetry] endpoint`) or `[telemetry] enabled = true` asks for the
//! default collector; `OTEL_SDK_DISABLED=true` and `enabled = false` turn
//! it off whatever else is set. A value that cannot be used is one
//! warning and a fallback, never an error: telemetry never fails a run.
//! Headers (`OTEL_EXPORTER_OTLP_HEADERS`, often an API key) are read by
//! the exporter from the environment and are never in the config file.
//! This module reads no environment itself: the caller passes a lookup.

use opentelemetry_otlp::Protocol;
pub use subagent_config::TelemetrySection;

/// The spans queued for export at most; past it a span is dropped and
/// counted (the run never waits on the collector).
pub const DEFAULT_QUEUE_SPANS: usize = 2048;

/// The collector used when telemetry is enabled with no endpoint: the
/// OTLP/HTTP default.
pub const DEFAULT_ENDPOINT: &str = "http://localhost:4318";

/// Telemetry as resolved: on, with these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The full URL spans are posted to.
    pub traces_url: String,
    /// The OTLP encoding.
    pub protocol: ExportProtocol,
    /// `service.name`.
    pub service_name: String,
    /// Whether text content is exported (masked).
    pub include_content: bool,
    /// The export queue's bound, spans.
    pub queue_spans: usize,
}

/// The OTLP/HTTP encodings supported (no gRPC: no tonic in this build).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportProtocol {
    /// `http/protobuf`, the default.
    Protobuf,
    /// `http/json`.
    Json,
}

impl ExportProtocol {
    /// The exporter's protocol.
    pub fn otlp(self) -> Protocol {
        match self {
            Self::Protobuf => Protocol::HttpBinary,
            Self::Json => Protocol::HttpJson,
        }
    }
}

/// The settings `env` (a variable lookup) and `section` make, or `None`
/// when telemetry is off; every value that cannot be used goes to `warn`.
pub fn resolve(
    section: &TelemetrySection,
    env: &dyn Fn(&str) -> Option<String>,
    warn: &mut dyn FnMut(String),
) -> Option<Settings> {
    let var = |name: &str| {
        env(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    if var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
        || section.enabled == Some(false)
    {
        return None;
    }
    let traces_url = if let Some(url) = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        url
    } else if let Some(base) = var("OTEL_EXPORTER_OTLP_ENDPOINT") {
        traces_url_of(&base)
    } else if let Some(base) = section.endpoint.as_deref().filter(|e| !e.trim().is_empty()) {
        traces_url_of(base.trim())
    } else if section.enabled == Some(true) {
        traces_url_of(DEFAULT_ENDPOINT)
    } else {
        return None;
    };
    if !(traces_url.starts_with("http://") || traces_url.starts_with("https://")) {
        warn(format!(
            "telemetry is off: the OTLP endpoint `{traces_url}` is not an http:// or https:// URL"
        ));
        return None;
    }
    let named = var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        .map(|v| ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", v))
        .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL").map(|v| ("OTEL_EXPORTER_OTLP_PROTOCOL", v)))
        .or_else(|| {
            section
                .protocol
                .clone()
                .map(|v| ("[telemetry] protocol", v))
        });
    let protocol = match named {
        None => ExportProtocol::Protobuf,
        Some((_, v)) if v == "http/protobuf" => ExportProtocol::Protobuf,
        Some((_, v)) if v == "http/json" => ExportProtocol::Json,
        Some((source, v)) => {
            warn(format!(
                "{source} = `{v}` is not supported (http/protobuf or http/json); exporting http/protobuf"
            ));
            ExportProtocol::Protobuf
        }
    };
    let service_name = var("OTEL_SERVICE_NAME")
        .or_else(|| section.service_name.clone())
        .unwrap_or_else(|| "subagent".to_owned());
    Some(Settings {
        traces_url,
        protocol,
        service_name,
        include_content: section.include_content.unwrap_or(false),
        queue_spans: section.queue_spans.unwrap_or(DEFAULT_QUEUE_SPANS).max(1),
    })
}

/// The OTLP/HTTP traces URL of a base endpoint (the spec's rule: the
/// signal's path appended).
fn traces_url_of(base: &str) -> String {
    format!("{}/v1/traces", base.trim_end_matches('/'))
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
