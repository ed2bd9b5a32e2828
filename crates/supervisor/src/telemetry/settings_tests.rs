use std::collections::HashMap;

use super::*;

fn resolved(section: &TelemetrySection, vars: &[(&str, &str)]) -> (Option<Settings>, Vec<String>) {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let mut warnings = Vec::new();
    let settings = resolve(section, &|name| vars.get(name).cloned(), &mut |w| {
        warnings.push(w)
    });
    (settings, warnings)
}

#[test]
fn off_without_an_endpoint() {
    assert_eq!(resolved(&TelemetrySection::default(), &[]), (None, vec![]));
}

#[test]
fn the_base_endpoint_gets_the_traces_path_and_the_traces_endpoint_is_used_as_is() {
    let (s, _) = resolved(
        &TelemetrySection::default(),
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318/")],
    );
    assert_eq!(s.unwrap().traces_url, "http://h:4318/v1/traces");
    let (s, _) = resolved(
        &TelemetrySection::default(),
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:1/x"),
        ],
    );
    assert_eq!(s.unwrap().traces_url, "http://t:1/x");
}

#[test]
fn the_environment_wins_over_the_config_and_disabled_wins_over_all() {
    let section = TelemetrySection {
        endpoint: Some("http://config:4318".into()),
        protocol: Some("http/json".into()),
        service_name: Some("from-config".into()),
        ..TelemetrySection::default()
    };
    let (s, w) = resolved(&section, &[]);
    let s = s.unwrap();
    assert_eq!(
        (s.traces_url.as_str(), s.protocol, s.service_name.as_str()),
        (
            "http://config:4318/v1/traces",
            ExportProtocol::Json,
            "from-config"
        )
    );
    assert!(w.is_empty());
    let (s, _) = resolved(
        &section,
        &[
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            ("OTEL_SERVICE_NAME", "env"),
        ],
    );
    let s = s.unwrap();
    assert_eq!(
        (s.protocol, s.service_name.as_str()),
        (ExportProtocol::Protobuf, "env")
    );
    assert_eq!(resolved(&section, &[("OTEL_SDK_DISABLED", "TRUE")]).0, None);
    let off = TelemetrySection {
        enabled: Some(false),
        ..section
    };
    assert_eq!(
        resolved(&off, &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h")]).0,
        None
    );
}

#[test]
fn an_unusable_protocol_or_endpoint_is_one_warning_never_an_error() {
    let (s, w) = resolved(
        &TelemetrySection::default(),
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ],
    );
    assert_eq!(s.unwrap().protocol, ExportProtocol::Protobuf);
    assert_eq!(w.len(), 1, "{w:?}");
    let (s, w) = resolved(
        &TelemetrySection::default(),
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", "h:4318")],
    );
    assert_eq!((s, w.len()), (None, 1));
}
