//! Hostile lengths cost nothing: a header announcing `u32::MAX` bytes is
//! refused after reading four bytes, and a small payload whose string length
//! prefix claims hundreds of megabytes is refused without allocating them.
//! The counting allocator of this binary (`alloc_probe`) measures both.

use std::io::Cursor;

use subagent_protocol::codec::{self, CodecError};
use subagent_protocol::frame::AsyncFrameReader;
use subagent_protocol::{FrameError, FrameReader, FromWorker, MaxPayload, ToWorker};

use super::alloc_probe::measure;

/// What a refused read may allocate at most, in bytes: room for error
/// strings, far below anything a hostile length could make it allocate.
const ALLOWED_PEAK: usize = 1024 * 1024;

/// A header announcing `u32::MAX` bytes, then a little real data that must
/// stay unread.
fn max_header_stream() -> Vec<u8> {
    let mut bytes = u32::MAX.to_le_bytes().to_vec();
    bytes.extend_from_slice(&[0xaa; 64]);
    bytes
}

#[test]
fn oversized_frame_is_refused_before_allocation() {
    let mut cursor = Cursor::new(max_header_stream());
    let (result, m) =
        measure(|| FrameReader::new(&mut cursor, MaxPayload::default()).read::<FromWorker>());
    match result {
        Err(FrameError::TooLarge { announced, max }) => {
            assert_eq!(announced, u32::MAX);
            assert_eq!(max, MaxPayload::default().bytes());
        }
        other => panic!("{other:?}"),
    }
    assert!(m.peak_bytes < ALLOWED_PEAK, "{m:?}");
    assert_eq!(cursor.position(), 4, "only the header is consumed");
}

#[test]
fn oversized_frame_is_refused_before_allocation_async() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("tokio runtime");
    let mut cursor = Cursor::new(max_header_stream());
    let (result, m) = measure(|| {
        rt.block_on(AsyncFrameReader::new(&mut cursor, MaxPayload::default()).read::<ToWorker>())
    });
    assert!(
        matches!(
            result,
            Err(FrameError::TooLarge {
                announced: u32::MAX,
                ..
            })
        ),
        "{result:?}"
    );
    assert!(m.peak_bytes < ALLOWED_PEAK, "{m:?}");
    assert_eq!(cursor.position(), 4, "only the header is consumed");
}

#[test]
fn largest_configurable_cap_still_refuses_u32_max() {
    let max = MaxPayload::new(subagent_protocol::frame::MAX_CONFIGURABLE_PAYLOAD).unwrap();
    let mut cursor = Cursor::new(max_header_stream());
    let (result, m) = measure(|| FrameReader::new(&mut cursor, max).read::<ToWorker>());
    assert!(
        matches!(result, Err(FrameError::TooLarge { .. })),
        "{result:?}"
    );
    assert!(m.peak_bytes < ALLOWED_PEAK, "{m:?}");
}

/// `ToWorker::Cancel { reason }` whose reason claims `claimed` bytes but
/// carries none: variant 1, then bincode's varint marker 252 and a u32.
fn cancel_claiming(claimed: u32) -> Vec<u8> {
    let mut payload = vec![1u8, 252];
    payload.extend_from_slice(&claimed.to_le_bytes());
    payload
}

#[test]
fn string_length_claim_inside_a_small_payload_is_refused_without_allocation() {
    const CLAIMED: u32 = 200_000_000;
    let payload = cancel_claiming(CLAIMED);
    let (result, m) = measure(|| codec::decode::<ToWorker>(&payload));
    assert!(matches!(result, Err(CodecError::Decode(_))), "{result:?}");
    assert!(m.peak_bytes < ALLOWED_PEAK, "{m:?}");
    assert!(m.largest_request < ALLOWED_PEAK, "{m:?}");

    let mut frame = (payload.len() as u32).to_le_bytes().to_vec();
    frame.extend_from_slice(&payload);
    let (result, m) =
        measure(|| FrameReader::new(frame.as_slice(), MaxPayload::default()).read::<ToWorker>());
    assert!(
        matches!(result, Err(FrameError::Codec(CodecError::Decode(_)))),
        "{result:?}"
    );
    assert!(m.peak_bytes < ALLOWED_PEAK, "{m:?}");
}

#[test]
fn a_string_as_long_as_its_payload_still_decodes() {
    // The allocation guard must not refuse honest large messages.
    const TEXT_BYTES: usize = 3 * 1024 * 1024;
    let message = ToWorker::Cancel {
        reason: "r".repeat(TEXT_BYTES),
    };
    let payload = codec::encode(&message).unwrap();
    assert_eq!(codec::decode::<ToWorker>(&payload).unwrap(), message);
}

#[test]
fn honest_strings_decode_on_both_sides_of_every_claim_tier() {
    // The codec picks its allocation limit by payload size (steps at 8 KiB,
    // 128 KiB, 2 MiB and 16 MiB of payload); a message just below or above
    // each step must still decode.
    for boundary in [8 * 1024, 128 * 1024, 2 * 1024 * 1024, 16 * 1024 * 1024] {
        for len in boundary - 8..boundary + 4 {
            let message = ToWorker::Cancel {
                reason: "b".repeat(len),
            };
            let payload = codec::encode(&message).unwrap();
            match codec::decode::<ToWorker>(&payload) {
                Ok(decoded) => assert!(decoded == message, "reason of {len} bytes changed"),
                Err(e) => panic!("reason of {len} bytes: {e}"),
            }
        }
    }
}

#[test]
fn payloads_dense_in_tiny_values_still_decode() {
    // Worst case for the claim limit: every empty string is 1 byte on the
    // wire but bincode claims 8 for its length. Sizes straddle the tiers.
    for count in [1_000, 8_190, 8_200, 20_000, 140_000, 300_000] {
        let mut spec = super::samples::minimal_task_spec();
        spec.tools = vec![String::new(); count];
        let message = ToWorker::Start(Box::new(spec));
        let payload = codec::encode(&message).unwrap();
        match codec::decode::<ToWorker>(&payload) {
            Ok(decoded) => assert!(decoded == message, "{count} empty tools changed"),
            Err(e) => panic!("{count} empty tools ({} payload bytes): {e}", payload.len()),
        }
    }
}
