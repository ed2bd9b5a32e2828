//! The payload codec: bincode 2.0.1 through its serde API.
//!
//! Kept behind this one module so the codec could be swapped without touching
//! framing or message types. It knows nothing about lengths on the wire; see
//! [`crate::frame`] for that.

use bincode::config::{Configuration, Limit, LittleEndian, Varint};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Upper bound on the bytes one decode may *claim* (allocate) while decoding a
/// single payload, in bytes.
///
/// The frame layer already bounds the payload length, but bincode claims the
/// in-memory size of every value it decodes (8 bytes for a `u64` that took 1
/// byte on the wire), so an honest payload claims up to
/// [`CLAIMS_PER_PAYLOAD_BYTE`] x its length. This is the limit for the
/// largest configurable payload; smaller payloads decode under
/// proportionally smaller limits (see [`decode`]).
pub const DECODE_CLAIM_LIMIT: usize = CLAIMS_PER_PAYLOAD_BYTE * MAX_CONFIGURABLE_PAYLOAD as usize;

/// Largest frame payload cap a caller may configure, in bytes (64 MiB); it
/// bounds what a decode may allocate ([`DECODE_CLAIM_LIMIT`]). Defined here,
/// below the frame layer that enforces it, because the codec's claim limit
/// is computed from it.
pub const MAX_CONFIGURABLE_PAYLOAD: u32 = 64 * 1024 * 1024;

/// Most bytes bincode claims per payload byte for these message types: a
/// varint-encoded integer or length prefix takes at least 1 byte on the wire
/// and claims at most 8 (no `u128`/`i128` field), a string's bytes claim 1
/// each.
pub const CLAIMS_PER_PAYLOAD_BYTE: usize = 8;

type Config = Configuration<LittleEndian, Varint, Limit<DECODE_CLAIM_LIMIT>>;

fn config() -> Config {
    bincode::config::standard().with_limit::<DECODE_CLAIM_LIMIT>()
}

/// Errors of the payload codec.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// The value could not be encoded.
    #[error("encode message: {0}")]
    Encode(String),
    /// The payload is not a valid encoding of the expected message type.
    #[error("decode message: {0}")]
    Decode(String),
    /// The payload decoded, but bytes were left over after the message.
    #[error("decode message: {trailing} trailing bytes after a {consumed}-byte message")]
    TrailingBytes {
        /// Bytes the message used.
        consumed: usize,
        /// Bytes left over.
        trailing: usize,
    },
}

/// Encodes one message into a fresh buffer.
pub fn encode<T: Serialize>(message: &T) -> Result<Vec<u8>, CodecError> {
    bincode::serde::encode_to_vec(message, config()).map_err(|e| CodecError::Encode(e.to_string()))
}

/// Claim-limit tiers, in bytes, tried smallest first: a payload decodes under
/// the first limit of at least [`CLAIMS_PER_PAYLOAD_BYTE`] x its length.
const SMALL_CLAIM_LIMIT: usize = 64 * 1024;
const MEDIUM_CLAIM_LIMIT: usize = 1024 * 1024;
const LARGE_CLAIM_LIMIT: usize = 16 * 1024 * 1024;
const HUGE_CLAIM_LIMIT: usize = 128 * 1024 * 1024;

fn decode_within<T: DeserializeOwned, const LIMIT: usize>(
    payload: &[u8],
) -> Result<(T, usize), bincode::error::DecodeError> {
    bincode::serde::decode_from_slice(payload, bincode::config::standard().with_limit::<LIMIT>())
}

fn decode_read_within<T: DeserializeOwned, R: std::io::Read, const LIMIT: usize>(
    source: &mut R,
) -> Result<T, bincode::error::DecodeError> {
    bincode::serde::decode_from_std_read(source, bincode::config::standard().with_limit::<LIMIT>())
}

/// Decodes one message of `len` payload bytes as it is read from `source`,
/// under the same claim limits as [`decode`]; whether all `len` bytes were
/// used is the caller's to check (see [`crate::frame::read_payload_streaming`]).
///
/// Decoding from the stream is what lets a large payload cost its decoded
/// size only: a string's bytes are read straight into the string, with no
/// copy of the whole payload beside it.
pub fn decode_from_read<T: DeserializeOwned, R: std::io::Read>(
    source: &mut R,
    len: usize,
) -> Result<T, CodecError> {
    let claims = len.saturating_mul(CLAIMS_PER_PAYLOAD_BYTE);
    let decoded = if claims <= SMALL_CLAIM_LIMIT {
        decode_read_within::<T, R, SMALL_CLAIM_LIMIT>(source)
    } else if claims <= MEDIUM_CLAIM_LIMIT {
        decode_read_within::<T, R, MEDIUM_CLAIM_LIMIT>(source)
    } else if claims <= LARGE_CLAIM_LIMIT {
        decode_read_within::<T, R, LARGE_CLAIM_LIMIT>(source)
    } else if claims <= HUGE_CLAIM_LIMIT {
        decode_read_within::<T, R, HUGE_CLAIM_LIMIT>(source)
    } else {
        bincode::serde::decode_from_std_read(source, config())
    };
    decoded.map_err(|e| CodecError::Decode(e.to_string()))
}

/// Decodes exactly one message from `payload`; leftover bytes are an error.
pub fn decode<T: DeserializeOwned>(payload: &[u8]) -> Result<T, CodecError> {
    // bincode allocates a string's bytes *before* checking they are present
    // (`vec![0; len]`), up to the claim limit: under one fixed limit a 6-byte
    // payload made it allocate 200 MB. An honest payload never claims more
    // than CLAIMS_PER_PAYLOAD_BYTE x its length, so a limit proportional to
    // the payload refuses nothing valid and caps what a lying length prefix
    // can allocate. The limit is a const generic, hence the tiers.
    let claims = payload.len().saturating_mul(CLAIMS_PER_PAYLOAD_BYTE);
    let decoded = if claims <= SMALL_CLAIM_LIMIT {
        decode_within::<T, SMALL_CLAIM_LIMIT>(payload)
    } else if claims <= MEDIUM_CLAIM_LIMIT {
        decode_within::<T, MEDIUM_CLAIM_LIMIT>(payload)
    } else if claims <= LARGE_CLAIM_LIMIT {
        decode_within::<T, LARGE_CLAIM_LIMIT>(payload)
    } else if claims <= HUGE_CLAIM_LIMIT {
        decode_within::<T, HUGE_CLAIM_LIMIT>(payload)
    } else {
        bincode::serde::decode_from_slice(payload, config())
    };
    let (value, consumed) = decoded.map_err(|e| CodecError::Decode(e.to_string()))?;
    if consumed != payload.len() {
        return Err(CodecError::TrailingBytes {
            consumed,
            trailing: payload.len() - consumed,
        });
    }
    Ok(value)
}
