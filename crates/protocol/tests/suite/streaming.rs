//! A payload decoded as it is read (`frame::read_payload_streaming`): a
//! large one costs about its decoded size (no whole-payload buffer beside
//! it), nothing past the payload is read, and a stream cut short, bytes
//! left over or a lying string length are typed errors, measured with the
//! counting allocator of this binary (`alloc_probe`).

use std::io::Cursor;

use subagent_protocol::codec::{self, CodecError};
use subagent_protocol::frame::read_payload_streaming;
use subagent_protocol::{FrameError, FromWorker, WorkerEvent};

use super::alloc_probe::measure;

/// The encoded payload of one text delta of `len` bytes.
fn text_delta_payload(len: usize) -> Vec<u8> {
    codec::encode(&FromWorker::Event(WorkerEvent::TextDelta {
        text: "y".repeat(len),
    }))
    .unwrap()
}

#[test]
fn a_streamed_payload_costs_about_its_decoded_size() {
    let payload = text_delta_payload(8 << 20);
    let len = payload.len();
    let mut cursor = Cursor::new(payload);
    let (decoded, m) = measure(|| read_payload_streaming::<FromWorker, _>(&mut cursor, len));
    match decoded {
        Ok(FromWorker::Event(WorkerEvent::TextDelta { text })) => assert_eq!(text.len(), 8 << 20),
        other => panic!("{other:?}"),
    }
    // Reading it whole first, then decoding, peaks at twice this.
    assert!(
        m.peak_bytes <= len + len / 10,
        "{m:?} for a {len}-byte payload"
    );
}

#[test]
fn nothing_past_the_payload_is_read() {
    let payload = text_delta_payload(100_000);
    let len = payload.len();
    let mut stream = payload;
    stream.extend_from_slice(&[0xaa; 64]);
    let mut cursor = Cursor::new(stream);
    read_payload_streaming::<FromWorker, _>(&mut cursor, len).unwrap();
    assert_eq!(cursor.position(), len as u64);
}

#[test]
fn a_stream_ending_inside_the_payload_is_truncated() {
    let payload = text_delta_payload(100_000);
    let len = payload.len();
    let cursor = Cursor::new(payload[..len / 2].to_vec());
    match read_payload_streaming::<FromWorker, _>(cursor, len) {
        Err(FrameError::Truncated { expected, got }) => {
            assert_eq!((expected, got), (len, len / 2));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn bytes_the_message_leaves_are_trailing_bytes() {
    let mut payload = text_delta_payload(100_000);
    payload.extend_from_slice(&[0; 3]);
    let len = payload.len();
    match read_payload_streaming::<FromWorker, _>(Cursor::new(payload), len) {
        Err(FrameError::Codec(CodecError::TrailingBytes { consumed, trailing })) => {
            assert_eq!((consumed, trailing), (len - 3, 3));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_lying_string_length_in_a_small_payload_allocates_little() {
    // A text delta whose string claims 200 MB, in a 16-byte payload.
    let mut payload = text_delta_payload(0);
    payload.pop();
    payload.push(0xFC);
    payload.extend_from_slice(&200_000_000u32.to_le_bytes());
    payload.resize(16, 0);
    let (result, m) = measure(|| read_payload_streaming::<FromWorker, _>(Cursor::new(payload), 16));
    assert!(result.is_err(), "{result:?}");
    assert!(m.peak_bytes < 1024 * 1024, "{m:?}");
}
