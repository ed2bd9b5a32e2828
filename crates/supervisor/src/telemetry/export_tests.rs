use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use opentelemetry::trace::{Span as _, Tracer as _, TracerProvider as _};
use opentelemetry_sdk::trace::SdkTracerProvider;

use super::*;

#[test]
fn a_full_queue_drops_and_counts_without_waiting() {
    let dropped = Arc::new(AtomicU64::new(0));
    // Nothing drains the queue: as if the collector hung.
    let (processor, _rx) = BoundedProcessor::undrained(2, Arc::clone(&dropped));
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .build();
    let tracer = provider.tracer("test");
    let started = Instant::now();
    for _ in 0..10 {
        tracer.start("s").end();
    }
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "ending spans waited"
    );
    assert_eq!(dropped.load(Ordering::Relaxed), 8);
    // Shutting down with the queue still full and nothing draining it
    // gives up at its timeout instead of hanging the process.
    let started = Instant::now();
    assert!(
        provider
            .shutdown_with_timeout(Duration::from_millis(200))
            .is_err()
    );
    assert!(started.elapsed() < Duration::from_secs(2), "shutdown hung");
}
