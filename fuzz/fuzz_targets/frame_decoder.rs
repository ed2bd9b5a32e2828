//! Fuzz target for the frame decoder: the input is read as a stream of
//! frames (both message directions) and decoded directly as one payload.
//!
//! Any panic, hang or unbounded allocation is a finding. Beyond "no panic",
//! it checks one invariant: a payload that decodes re-encodes to bytes that
//! decode and re-encode to the same bytes (compared as bytes, not values, so
//! NaN floats cannot cause false alarms).

#![no_main]

use libfuzzer_sys::fuzz_target;
use subagent_protocol::codec;
use subagent_protocol::{FrameReader, FromWorker, MaxPayload, ToWorker};

/// Frame cap for the stream readers, in bytes: small, so announced lengths
/// are exercised on both sides of the cap without slow 16 MiB reads.
const FUZZ_MAX_PAYLOAD: u32 = 64 * 1024;

fn drain<T: serde::de::DeserializeOwned>(data: &[u8], max: MaxPayload) {
    let mut reader = FrameReader::new(data, max);
    // Each decoded frame consumes at least 5 bytes, so this ends.
    while let Ok(Some(_)) = reader.read::<T>() {}
}

fn re_encode_is_stable<T: serde::Serialize + serde::de::DeserializeOwned>(data: &[u8]) {
    let Ok(first) = codec::decode::<T>(data) else {
        return;
    };
    let bytes = codec::encode(&first).expect("a decoded message encodes");
    let second: T = codec::decode(&bytes).expect("re-encoded bytes decode");
    let again = codec::encode(&second).expect("encodes twice");
    assert_eq!(bytes, again, "encode/decode is not stable");
}

fuzz_target!(|data: &[u8]| {
    let Ok(max) = MaxPayload::new(FUZZ_MAX_PAYLOAD) else {
        return;
    };
    drain::<ToWorker>(data, max);
    drain::<FromWorker>(data, max);
    re_encode_is_stable::<ToWorker>(data);
    re_encode_is_stable::<FromWorker>(data);
});
