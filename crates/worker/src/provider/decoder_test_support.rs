//! Test helpers shared by the dialect decoders' unit tests: parse recorded
//! SSE bytes into events, and drive a decoder over them.

use super::sse::{SseEvent, SseParser};
use super::stream_turn::{Progress, TurnDecoder};
use super::{ProviderError, StreamDelta};

/// Every event in `bytes`, as the provider's parser sees them.
pub(super) fn events(bytes: &[u8]) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    parser.push(bytes, &mut out).unwrap();
    out.extend(parser.finish().unwrap());
    out
}

/// A decoder's result and the deltas it reported.
pub(super) type Decoded<D> = (
    Result<<D as TurnDecoder>::Output, ProviderError>,
    Vec<StreamDelta>,
);

/// Feeds events to a fresh `D` until it says done; returns its result and
/// the deltas it reported.
pub(super) fn decode<D: TurnDecoder + Default>(events: &[SseEvent]) -> Decoded<D> {
    let mut decoder = D::default();
    let mut deltas = Vec::new();
    for event in events {
        match decoder.on_event(event, &mut |d| deltas.push(d)) {
            Ok(Progress::More) => {}
            Ok(Progress::Done) => break,
            Err(e) => return (Err(e), deltas),
        }
    }
    (decoder.finish(), deltas)
}
