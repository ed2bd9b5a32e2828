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
/// The frame layer already bounds the payload length, but bincode claims
/// memory per element (`size_of::<T>() * len`), which can exceed the payload
/// size; this limit keeps a hostile length prefix inside a payload from
/// turning into a huge allocation. 4 x the largest configurable payload.
pub const DECODE_CLAIM_LIMIT: usize = 4 * crate::frame::MAX_CONFIGURABLE_PAYLOAD as usize;

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

/// Decodes exactly one message from `payload`; leftover bytes are an error.
pub fn decode<T: DeserializeOwned>(payload: &[u8]) -> Result<T, CodecError> {
    let (value, consumed) = bincode::serde::decode_from_slice(payload, config())
        .map_err(|e| CodecError::Decode(e.to_string()))?;
    if consumed != payload.len() {
        return Err(CodecError::TrailingBytes {
            consumed,
            trailing: payload.len() - consumed,
        });
    }
    Ok(value)
}
