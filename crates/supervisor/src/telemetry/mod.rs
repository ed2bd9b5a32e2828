//! OpenTelemetry traces of runs, following the GenAI semantic conventions:
//! `invoke_agent {agent}` per run, `chat {model}` per model turn,
//! `execute_tool {tool}` per tool call, nested runs and batch tasks as
//! child spans, joined to a caller's trace by W3C trace context.
//!
//! The spans are built here in the supervisor from the worker events it
//! already receives (docs/decisions.md, "Traces from the supervisor"): the
//! worker and the tools know nothing of telemetry, and no OTLP variable
//! or header reaches them (their environment is an allowlist).
//!
//! One [`Telemetry`] per process, set up by [`init`] from the environment
//! and the user config, flushed (boundedly) by [`flush_at_exit`]. It must
//! never slow or fail a run: spans go through a bounded queue, drops are
//! counted, an unreachable collector is one warning.

mod carrier;
mod export;
mod run_spans;
mod settings;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider, SpanExporter as _};

pub use carrier::TraceParent;
pub use run_spans::{BatchSpan, RunSpans};
pub use settings::{
    DEFAULT_ENDPOINT, DEFAULT_QUEUE_SPANS, ExportProtocol, Settings, TelemetrySection, resolve,
};

/// How long the exit flush may take at most: a hung collector must not
/// hold the process.
const EXIT_FLUSH: Duration = Duration::from_secs(3);

/// How long one export request may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// This process's telemetry: off, or a tracer exporting to a collector.
#[derive(Debug, Clone, Default)]
pub struct Telemetry(Option<Arc<Live>>);

#[derive(Debug)]
struct Live {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    dropped: Arc<AtomicU64>,
    include_content: bool,
    /// The caller's span from `TRACEPARENT`, for runs given none.
    env_parent: Option<TraceParent>,
}

static GLOBAL: OnceLock<Telemetry> = OnceLock::new();

/// Sets up this process's telemetry from `section` and the environment
/// (the first call wins; later ones return what it made).
pub fn init(section: &TelemetrySection) -> Telemetry {
    GLOBAL
        .get_or_init(|| {
            let env = |name: &str| std::env::var(name).ok();
            let mut warn = |w: String| tracing::warn!("{w}");
            match resolve(section, &env, &mut warn) {
                Some(settings) => Telemetry::start(&settings),
                None => Telemetry::default(),
            }
        })
        .clone()
}

/// This process's telemetry (off when [`init`] was never called).
pub fn current() -> Telemetry {
    GLOBAL.get().cloned().unwrap_or_default()
}

/// Posts what is queued and stops exporting, within a few seconds at
/// most; for the end of the process.
pub fn flush_at_exit() {
    if let Some(Some(live)) = GLOBAL.get().map(|t| t.0.as_ref()) {
        let _ = live.provider.shutdown_with_timeout(EXIT_FLUSH);
    }
}

impl Telemetry {
    /// Telemetry exporting as `settings` say; off, with one warning, when
    /// the exporter cannot be built.
    pub fn start(settings: &Settings) -> Self {
        match Self::try_start(settings) {
            Ok(live) => Self(Some(Arc::new(live))),
            Err(why) => {
                tracing::warn!("telemetry is off: {why}");
                Self::default()
            }
        }
    }

    fn try_start(settings: &Settings) -> Result<Live, String> {
        let client = reqwest::Client::builder()
            .timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(export::ReqwestClient(client))
            .with_protocol(settings.protocol.otlp())
            .with_endpoint(settings.traces_url.clone())
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| format!("cannot build the OTLP exporter: {e}"))?;
        let resource = Resource::builder()
            .with_service_name(settings.service_name.clone())
            .build();
        exporter.set_resource(&resource);
        let dropped = Arc::new(AtomicU64::new(0));
        let processor = export::BoundedProcessor::start(
            exporter,
            settings.traces_url.clone(),
            settings.queue_spans,
            dropped.clone(),
        )
        .map_err(|e| format!("cannot start the export thread: {e}"))?;
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(resource)
            .build();
        let tracer = provider.tracer("subagent");
        Ok(Live {
            provider,
            tracer,
            dropped,
            include_content: settings.include_content,
            env_parent: TraceParent::of_env(),
        })
    }

    /// True when spans are exported.
    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// Spans dropped so far because the export queue was full.
    pub fn dropped(&self) -> u64 {
        self.0
            .as_ref()
            .map_or(0, |l| l.dropped.load(Ordering::Relaxed))
    }

    /// The spans of one run under `parent` (else the environment's
    /// `TRACEPARENT`, else a trace of its own); a no-op when off.
    pub fn run_spans(
        &self,
        start: run_spans::RunStart<'_>,
        parent: Option<&TraceParent>,
    ) -> RunSpans {
        match &self.0 {
            None => RunSpans::off(),
            Some(live) => RunSpans::start(
                live.tracer.clone(),
                start,
                parent.or(live.env_parent.as_ref()),
                live.include_content,
                live.dropped.clone(),
            ),
        }
    }

    /// A span for a batch, its tasks' runs' parent; a no-op when off.
    pub fn batch_span(&self, tasks: usize) -> BatchSpan {
        match &self.0 {
            None => BatchSpan::off(),
            Some(live) => BatchSpan::start(&live.tracer, tasks, live.env_parent.as_ref()),
        }
    }
}

pub use run_spans::RunStart;
