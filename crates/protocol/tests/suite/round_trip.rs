//! Every sample message survives encode -> frame -> read, through the
//! blocking and the async reader and writer, alone and back to back in one
//! stream, and the stream then ends cleanly (`Ok(None)`).

use std::fmt::Debug;

use pretty_assertions::assert_eq;
use serde::Serialize;
use serde::de::DeserializeOwned;
use subagent_protocol::frame::{AsyncFrameReader, AsyncFrameWriter, encode_frame};
use subagent_protocol::{FrameReader, FrameWriter, MaxPayload};

use super::samples;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("tokio runtime")
}

fn one_by_one<T>(messages: &[(&str, T)])
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let rt = runtime();
    for (name, message) in messages {
        let frame = encode_frame(message, MaxPayload::default()).expect(name);

        let mut blocking = FrameReader::new(frame.as_slice(), MaxPayload::default());
        assert_eq!(
            blocking.read::<T>().expect(name).as_ref(),
            Some(message),
            "{name}"
        );
        assert!(
            blocking.read::<T>().expect(name).is_none(),
            "{name}: clean end"
        );

        let got = rt.block_on(async {
            let mut reader = AsyncFrameReader::new(frame.as_slice(), MaxPayload::default());
            let first = reader.read::<T>().await.expect(name);
            let end = reader.read::<T>().await.expect(name);
            (first, end)
        });
        assert_eq!(got.0.as_ref(), Some(message), "{name} (async)");
        assert!(got.1.is_none(), "{name} (async): clean end");
    }
}

fn back_to_back<T>(messages: &[(&str, T)])
where
    T: Serialize + DeserializeOwned + PartialEq + Debug + Clone,
{
    let expected: Vec<T> = messages.iter().map(|(_, m)| m.clone()).collect();

    let mut stream = Vec::new();
    let mut writer = FrameWriter::new(&mut stream, MaxPayload::default());
    for message in &expected {
        writer.write(message).expect("blocking write");
    }
    let mut reader = FrameReader::new(stream.as_slice(), MaxPayload::default());
    let mut got = Vec::new();
    while let Some(message) = reader.read::<T>().expect("blocking read") {
        got.push(message);
    }
    assert_eq!(got, expected);

    let (async_stream, async_got) = runtime().block_on(async {
        let mut stream = Vec::new();
        let mut writer = AsyncFrameWriter::new(&mut stream, MaxPayload::default());
        for message in &expected {
            writer.write(message).await.expect("async write");
        }
        let mut reader = AsyncFrameReader::new(stream.as_slice(), MaxPayload::default());
        let mut got = Vec::new();
        while let Some(message) = reader.read::<T>().await.expect("async read") {
            got.push(message);
        }
        (stream, got)
    });
    assert_eq!(async_got, expected);
    assert_eq!(
        async_stream, stream,
        "async and blocking writers agree byte for byte"
    );
}

#[test]
fn every_to_worker_message_round_trips_alone() {
    one_by_one(&samples::to_worker());
}

#[test]
fn every_from_worker_message_round_trips_alone() {
    one_by_one(&samples::from_worker());
}

#[test]
fn to_worker_messages_round_trip_back_to_back() {
    back_to_back(&samples::to_worker());
}

#[test]
fn from_worker_messages_round_trip_back_to_back() {
    back_to_back(&samples::from_worker());
}

#[test]
fn frames_survive_a_reader_that_returns_one_byte_at_a_time() {
    // A pipe may deliver a frame in any number of pieces.
    struct Trickle<'a>(&'a [u8]);
    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match (self.0.split_first(), buf.first_mut()) {
                (Some((b, rest)), Some(slot)) => {
                    *slot = *b;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }
    let messages = samples::from_worker();
    let mut stream = Vec::new();
    for (_, m) in &messages {
        stream.extend(encode_frame(m, MaxPayload::default()).unwrap());
    }
    let mut reader = FrameReader::new(Trickle(&stream), MaxPayload::default());
    for (name, m) in &messages {
        assert_eq!(reader.read().unwrap().as_ref(), Some(m), "{name}");
    }
    assert_eq!(
        reader.read::<subagent_protocol::FromWorker>().unwrap(),
        None
    );
}

#[test]
fn interrupted_reads_are_retried() {
    struct Flaky<'a> {
        data: &'a [u8],
        interrupt_next: bool,
    }
    impl std::io::Read for Flaky<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.interrupt_next = !self.interrupt_next;
            if self.interrupt_next {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            let n = self.data.len().min(buf.len()).min(3);
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }
    let (_, message) = &samples::to_worker()[0];
    let frame = encode_frame(message, MaxPayload::default()).unwrap();
    let mut reader = FrameReader::new(
        Flaky {
            data: &frame,
            interrupt_next: false,
        },
        MaxPayload::default(),
    );
    assert_eq!(reader.read().unwrap().as_ref(), Some(message));
}

#[test]
fn a_json_dump_of_a_task_spec_never_shows_the_api_key_but_the_wire_carries_it() {
    let mut spec = super::samples::full_task_spec();
    spec.provider.api_key = Some(subagent_protocol::ApiKey::new("sk-wire-only-0123456789"));
    let json = serde_json::to_string(&spec).unwrap();
    assert!(!json.contains("sk-wire-only"), "{json}");
    assert!(json.contains(subagent_protocol::task_spec::MASKED_API_KEY));
    let frame = subagent_protocol::frame::encode_frame(
        &subagent_protocol::ToWorker::Start(Box::new(spec.clone())),
        subagent_protocol::MaxPayload::default(),
    )
    .unwrap();
    let mut reader = subagent_protocol::FrameReader::new(
        frame.as_slice(),
        subagent_protocol::MaxPayload::default(),
    );
    match reader.read::<subagent_protocol::ToWorker>().unwrap() {
        Some(subagent_protocol::ToWorker::Start(decoded)) => {
            assert_eq!(
                decoded.provider.api_key.as_ref().map(|k| k.expose()),
                Some("sk-wire-only-0123456789")
            );
        }
        other => panic!("expected Start, got {other:?}"),
    }
}
