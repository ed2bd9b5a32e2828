//! Broken frames are typed errors, never panics: a frame cut short in its
//! header or its payload, an unknown variant index, trailing bytes after a
//! valid message, and out-of-range payload caps.

use subagent_protocol::codec::{self, CodecError};
use subagent_protocol::frame::{AsyncFrameReader, MAX_CONFIGURABLE_PAYLOAD, encode_frame};
use subagent_protocol::{FrameError, FrameReader, FromWorker, MaxPayload, ToWorker};

use super::samples;

fn read_blocking<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<Option<T>, FrameError> {
    FrameReader::new(bytes, MaxPayload::default()).read::<T>()
}

fn read_async<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<Option<T>, FrameError> {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("tokio runtime")
        .block_on(AsyncFrameReader::new(bytes, MaxPayload::default()).read::<T>())
}

/// Both readers, so they cannot disagree about what is broken.
fn read_both<T: serde::de::DeserializeOwned + std::fmt::Debug>(
    bytes: &[u8],
) -> [Result<Option<T>, FrameError>; 2] {
    [read_blocking(bytes), read_async(bytes)]
}

fn full_start_frame() -> Vec<u8> {
    encode_frame(
        &ToWorker::Start(Box::new(samples::full_task_spec())),
        MaxPayload::default(),
    )
    .unwrap()
}

#[test]
fn empty_stream_is_a_clean_end() {
    for result in read_both::<ToWorker>(&[]) {
        assert!(matches!(result, Ok(None)), "{result:?}");
    }
}

#[test]
fn frame_cut_in_the_header_is_truncated() {
    let frame = full_start_frame();
    for cut in 1..4 {
        for result in read_both::<ToWorker>(&frame[..cut]) {
            match result {
                Err(e @ FrameError::Truncated { expected: 4, got }) if got == cut => {
                    assert!(e.is_disconnect());
                }
                other => panic!("cut at {cut}: {other:?}"),
            }
        }
    }
}

#[test]
fn frame_cut_in_the_payload_is_truncated() {
    let frame = full_start_frame();
    let payload_len = frame.len() - 4;
    for cut in [4, 5, frame.len() / 2, frame.len() - 1] {
        for result in read_both::<ToWorker>(&frame[..cut]) {
            match result {
                Err(FrameError::Truncated { expected, got })
                    if expected == payload_len && got == cut - 4 => {}
                other => panic!("cut at {cut}: {other:?}"),
            }
        }
    }
}

#[test]
fn unknown_variant_index_is_a_decode_error() {
    // ToWorker has 3 variants (0..=2) and FromWorker 4 (0..=3).
    for result in read_both::<ToWorker>(&[1, 0, 0, 0, 3]) {
        assert!(
            matches!(result, Err(FrameError::Codec(CodecError::Decode(_)))),
            "{result:?}"
        );
    }
    for result in read_both::<FromWorker>(&[1, 0, 0, 0, 4]) {
        assert!(
            matches!(result, Err(FrameError::Codec(CodecError::Decode(_)))),
            "{result:?}"
        );
    }
    // An unknown WorkerEvent inside a known FromWorker::Event.
    for result in read_both::<FromWorker>(&[2, 0, 0, 0, 1, 200]) {
        assert!(
            matches!(result, Err(FrameError::Codec(CodecError::Decode(_)))),
            "{result:?}"
        );
    }
}

#[test]
fn trailing_garbage_inside_the_payload_is_refused() {
    let mut payload = codec::encode(&ToWorker::Cancel {
        reason: "stop".into(),
    })
    .unwrap();
    let message_len = payload.len();
    payload.extend_from_slice(&[0xde, 0xad]);
    let mut frame = (payload.len() as u32).to_le_bytes().to_vec();
    frame.extend_from_slice(&payload);
    for result in read_both::<ToWorker>(&frame) {
        match result {
            Err(FrameError::Codec(CodecError::TrailingBytes {
                consumed,
                trailing: 2,
            })) if consumed == message_len => {}
            other => panic!("{other:?}"),
        }
    }
    assert!(matches!(
        codec::decode::<ToWorker>(&payload),
        Err(CodecError::TrailingBytes { trailing: 2, .. })
    ));
}

#[test]
fn zero_length_payload_is_a_decode_error() {
    for result in read_both::<ToWorker>(&[0, 0, 0, 0]) {
        assert!(
            matches!(result, Err(FrameError::Codec(CodecError::Decode(_)))),
            "{result:?}"
        );
    }
}

#[test]
fn invalid_utf8_in_a_string_is_a_decode_error() {
    // Cancel { reason } with a 1-byte reason that is not UTF-8.
    for result in read_both::<ToWorker>(&[3, 0, 0, 0, 1, 1, 0xff]) {
        assert!(
            matches!(result, Err(FrameError::Codec(CodecError::Decode(_)))),
            "{result:?}"
        );
    }
}

#[test]
fn payload_cap_must_be_between_one_byte_and_64_mib() {
    assert!(matches!(
        MaxPayload::new(0),
        Err(FrameError::InvalidCap { requested: 0, .. })
    ));
    assert!(matches!(
        MaxPayload::new(MAX_CONFIGURABLE_PAYLOAD + 1),
        Err(FrameError::InvalidCap { .. })
    ));
    assert!(matches!(
        MaxPayload::new(u32::MAX),
        Err(FrameError::InvalidCap { .. })
    ));
    assert_eq!(MAX_CONFIGURABLE_PAYLOAD, 64 * 1024 * 1024);
    assert_eq!(MaxPayload::new(1).unwrap().bytes(), 1);
    assert_eq!(
        MaxPayload::new(MAX_CONFIGURABLE_PAYLOAD).unwrap().bytes(),
        MAX_CONFIGURABLE_PAYLOAD
    );
}

#[test]
fn a_payload_exactly_at_the_cap_is_accepted_and_one_byte_over_is_not() {
    let message = ToWorker::Cancel {
        reason: "x".repeat(100),
    };
    let payload_len = codec::encode(&message).unwrap().len() as u32;
    let at_cap = MaxPayload::new(payload_len).unwrap();
    let frame = encode_frame(&message, at_cap).unwrap();
    let read = FrameReader::new(frame.as_slice(), at_cap).read::<ToWorker>();
    assert_eq!(read.unwrap(), Some(message.clone()));

    let below = MaxPayload::new(payload_len - 1).unwrap();
    assert!(matches!(
        encode_frame(&message, below),
        Err(FrameError::TooLarge { announced, max }) if announced == payload_len && max == payload_len - 1
    ));
    let read = FrameReader::new(frame.as_slice(), below).read::<ToWorker>();
    assert!(
        matches!(read, Err(FrameError::TooLarge { announced, .. }) if announced == payload_len),
        "{read:?}"
    );
}

#[test]
fn errors_read_as_sentences_with_the_figures() {
    let e = FrameError::TooLarge {
        announced: u32::MAX,
        max: 16,
    };
    assert_eq!(
        e.to_string(),
        "frame of 4294967295 bytes exceeds the 16-byte limit"
    );
    assert!(!e.is_disconnect());
    let e = FrameError::Truncated {
        expected: 4,
        got: 1,
    };
    assert_eq!(
        e.to_string(),
        "stream ended inside a frame: got 1 of 4 bytes"
    );
}
