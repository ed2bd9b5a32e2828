//! Golden bytes: every sample message's frame is compared byte for byte with
//! `tests/golden/<name>.hex`, so an accidental wire change fails here.
//!
//! An intended change bumps `PROTOCOL_VERSION` and regenerates the fixtures
//! with `UPDATE_GOLDEN=1 cargo test -p subagent-protocol golden`. Without
//! that variable a missing fixture is a failure, never silently created.

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde::Serialize;
use serde::de::DeserializeOwned;
use subagent_protocol::frame::encode_frame;
use subagent_protocol::{FrameReader, MaxPayload};

use super::{hex, samples};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn updating() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1")
}

/// Compares (or, when updating, rewrites) one fixture; returns a failure
/// description instead of panicking so every mismatch is reported at once.
fn check<T>(name: &str, message: &T) -> Option<String>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let frame = encode_frame(message, MaxPayload::default()).expect("encode sample");
    let path = golden_dir().join(format!("{name}.hex"));
    if updating() {
        let comment = format!(
            "{name}: one frame (u32 LE payload length, then the bincode payload).\n\
             Regenerate only for an intended wire change: UPDATE_GOLDEN=1 cargo test -p subagent-protocol golden"
        );
        std::fs::create_dir_all(golden_dir()).expect("create golden dir");
        std::fs::write(&path, hex::render(&comment, &frame)).expect("write fixture");
        return None;
    }
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => {
            return Some(format!(
                "{name}: fixture {} unreadable ({e}); run with UPDATE_GOLDEN=1 to create it",
                path.display()
            ));
        }
    };
    let golden = match hex::parse(&text) {
        Ok(bytes) => bytes,
        Err(e) => return Some(format!("{name}: fixture is not valid hex: {e}")),
    };
    if golden != frame {
        return Some(format!(
            "{name}: wire bytes changed\n  golden:  {}\n  encoded: {}",
            hex::render("", &golden).replace('\n', " "),
            hex::render("", &frame).replace('\n', " ")
        ));
    }
    // Old data, new reader: the fixture still decodes to the same value.
    let mut reader = FrameReader::new(golden.as_slice(), MaxPayload::default());
    match reader.read::<T>() {
        Ok(Some(decoded)) if decoded == *message => None,
        other => Some(format!("{name}: fixture decodes to {other:?}")),
    }
}

#[test]
fn every_message_matches_its_golden_bytes() {
    let mut failures: Vec<String> = Vec::new();
    for (name, message) in samples::to_worker() {
        failures.extend(check(name, &message));
    }
    for (name, message) in samples::from_worker() {
        failures.extend(check(name, &message));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn expected_files() -> BTreeSet<String> {
    samples::to_worker()
        .iter()
        .map(|(n, _)| format!("{n}.hex"))
        .chain(
            samples::from_worker()
                .iter()
                .map(|(n, _)| format!("{n}.hex")),
        )
        .collect()
}

#[test]
fn no_fixture_without_a_sample() {
    if updating() {
        // The other test is rewriting the directory concurrently; a stale
        // fixture is caught by the next ordinary run.
        eprintln!("UPDATE_GOLDEN=1: not checking for stale fixtures in this run");
        return;
    }
    let expected = expected_files();
    let on_disk: BTreeSet<String> = std::fs::read_dir(golden_dir())
        .expect("golden dir exists")
        .map(|entry| {
            entry
                .expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(on_disk, expected);
}

#[test]
fn hand_checked_frames() {
    // Two frames decoded by hand, so the fixtures are anchored to the
    // documented format and not only to whatever the encoder produced once:
    // u32 LE length, then bincode's varint variant index.
    let ping = encode_frame(&subagent_protocol::ToWorker::Ping, MaxPayload::default()).unwrap();
    assert_eq!(ping, [1, 0, 0, 0, 2]);
    let pong = encode_frame(&subagent_protocol::FromWorker::Pong, MaxPayload::default()).unwrap();
    assert_eq!(pong, [1, 0, 0, 0, 2]);
    let cancel = encode_frame(
        &subagent_protocol::ToWorker::Cancel {
            reason: "ab".into(),
        },
        MaxPayload::default(),
    )
    .unwrap();
    // variant 1, string length 2, "ab"
    assert_eq!(cancel, [4, 0, 0, 0, 1, 2, b'a', b'b']);
}
