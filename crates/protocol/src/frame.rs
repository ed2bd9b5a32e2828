//! Length-prefixed frames: a `u32` little-endian payload length, then the
//! payload (see [`crate::codec`]).
//!
//! The length is checked against [`MaxPayload`] *before* anything is
//! allocated, so a peer announcing `u32::MAX` bytes costs four bytes of
//! reading, not four gigabytes. A frame cut short, an oversized frame and an
//! undecodable payload are each a typed [`FrameError`], never a panic.
//!
//! Both blocking (`Read`/`Write`) and async (tokio) forms are provided; they
//! share the header and payload checks so they cannot disagree.

use std::io::{self, Read, Write};

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::codec::{self, CodecError};

/// Default cap on one frame's payload, in bytes (16 MiB): far above any real
/// message (tool results are capped at 50 KiB before they are sent), far below
/// what would hurt the supervisor if many workers sent one at once.
pub const DEFAULT_MAX_PAYLOAD: u32 = 16 * 1024 * 1024;

pub use crate::codec::MAX_CONFIGURABLE_PAYLOAD;

/// Bytes in a frame header.
pub const HEADER_LEN: usize = 4;

/// A validated cap on frame payloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaxPayload(u32);

impl MaxPayload {
    /// A cap of `bytes`; refused above [`MAX_CONFIGURABLE_PAYLOAD`] or at 0.
    pub fn new(bytes: u32) -> Result<Self, FrameError> {
        if bytes == 0 || bytes > MAX_CONFIGURABLE_PAYLOAD {
            return Err(FrameError::InvalidCap {
                requested: bytes,
                max: MAX_CONFIGURABLE_PAYLOAD,
            });
        }
        Ok(Self(bytes))
    }

    /// The cap in bytes.
    pub fn bytes(self) -> u32 {
        self.0
    }
}

impl Default for MaxPayload {
    fn default() -> Self {
        Self(DEFAULT_MAX_PAYLOAD)
    }
}

/// Everything that can go wrong reading or writing a frame.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The underlying stream failed.
    #[error("frame i/o: {0}")]
    Io(#[from] io::Error),
    /// The header announced more than the cap; nothing was allocated.
    #[error("frame of {announced} bytes exceeds the {max}-byte limit")]
    TooLarge {
        /// The length the header announced.
        announced: u32,
        /// The cap in force.
        max: u32,
    },
    /// The stream ended inside a frame.
    #[error("stream ended inside a frame: got {got} of {expected} bytes")]
    Truncated {
        /// Bytes the header (or the header itself) called for.
        expected: usize,
        /// Bytes that arrived before end of stream.
        got: usize,
    },
    /// The payload was not a valid message.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// A cap outside the allowed range was requested.
    #[error("frame size cap {requested} is outside 1..={max} bytes")]
    InvalidCap {
        /// What was asked for.
        requested: u32,
        /// The largest allowed.
        max: u32,
    },
}

impl FrameError {
    /// True when the peer closed the stream cleanly or mid-frame: the other
    /// side is gone and the reader should stop.
    pub fn is_disconnect(&self) -> bool {
        match self {
            FrameError::Truncated { .. } => true,
            FrameError::Io(e) => matches!(
                e.kind(),
                io::ErrorKind::BrokenPipe
                    | io::ErrorKind::ConnectionReset
                    | io::ErrorKind::UnexpectedEof
            ),
            _ => false,
        }
    }
}

/// Encodes `message` as one complete frame (header + payload).
pub fn encode_frame<T: Serialize>(message: &T, max: MaxPayload) -> Result<Vec<u8>, FrameError> {
    let payload = codec::encode(message)?;
    let len = u32::try_from(payload.len())
        .ok()
        .filter(|len| *len <= max.0)
        .ok_or(FrameError::TooLarge {
            announced: u32::try_from(payload.len()).unwrap_or(u32::MAX),
            max: max.0,
        })?;
    let mut frame = Vec::with_capacity(HEADER_LEN + payload.len());
    frame.extend_from_slice(&len.to_le_bytes());
    frame.extend_from_slice(&payload);
    Ok(frame)
}

fn checked_len(header: [u8; HEADER_LEN], max: MaxPayload) -> Result<usize, FrameError> {
    let announced = u32::from_le_bytes(header);
    if announced > max.0 {
        return Err(FrameError::TooLarge {
            announced,
            max: max.0,
        });
    }
    Ok(announced as usize)
}

/// Reads until `buf` is full or the stream ends; returns the bytes read.
fn read_full<R: Read>(reader: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

async fn read_full_async<R: AsyncRead + Unpin>(
    reader: &mut R,
    buf: &mut [u8],
) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]).await {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Reads frames from a blocking stream.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    max: MaxPayload,
}

impl<R> FrameReader<R> {
    /// A reader with the given payload cap.
    pub fn new(inner: R, max: MaxPayload) -> Self {
        Self { inner, max }
    }

    /// The wrapped stream.
    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: Read> FrameReader<R> {
    /// Reads one message. `Ok(None)` is a clean end of stream at a frame
    /// boundary; an end inside a frame is [`FrameError::Truncated`].
    pub fn read<T: DeserializeOwned>(&mut self) -> Result<Option<T>, FrameError> {
        let mut header = [0u8; HEADER_LEN];
        match read_full(&mut self.inner, &mut header)? {
            0 => return Ok(None),
            HEADER_LEN => {}
            got => {
                return Err(FrameError::Truncated {
                    expected: HEADER_LEN,
                    got,
                });
            }
        }
        let len = checked_len(header, self.max)?;
        let mut payload = vec![0u8; len];
        let got = read_full(&mut self.inner, &mut payload)?;
        if got != len {
            return Err(FrameError::Truncated { expected: len, got });
        }
        Ok(Some(codec::decode(&payload)?))
    }
}

/// Reads frames from an async stream.
#[derive(Debug)]
pub struct AsyncFrameReader<R> {
    inner: R,
    max: MaxPayload,
}

impl<R> AsyncFrameReader<R> {
    /// A reader with the given payload cap.
    pub fn new(inner: R, max: MaxPayload) -> Self {
        Self { inner, max }
    }
}

impl<R: AsyncRead + Unpin> AsyncFrameReader<R> {
    /// Reads one message; see [`FrameReader::read`].
    ///
    /// Not cancel-safe: dropping the future mid-frame loses the frame's
    /// position. Run it in a dedicated task that owns the reader.
    pub async fn read<T: DeserializeOwned>(&mut self) -> Result<Option<T>, FrameError> {
        let mut header = [0u8; HEADER_LEN];
        match read_full_async(&mut self.inner, &mut header).await? {
            0 => return Ok(None),
            HEADER_LEN => {}
            got => {
                return Err(FrameError::Truncated {
                    expected: HEADER_LEN,
                    got,
                });
            }
        }
        let len = checked_len(header, self.max)?;
        let mut payload = vec![0u8; len];
        let got = read_full_async(&mut self.inner, &mut payload).await?;
        if got != len {
            return Err(FrameError::Truncated { expected: len, got });
        }
        Ok(Some(codec::decode(&payload)?))
    }
}

/// Writes frames to a blocking stream, one `write_all` per frame.
#[derive(Debug)]
pub struct FrameWriter<W> {
    inner: W,
    max: MaxPayload,
}

impl<W> FrameWriter<W> {
    /// A writer with the given payload cap.
    pub fn new(inner: W, max: MaxPayload) -> Self {
        Self { inner, max }
    }
}

impl<W: Write> FrameWriter<W> {
    /// Writes and flushes one message.
    pub fn write<T: Serialize>(&mut self, message: &T) -> Result<(), FrameError> {
        let frame = encode_frame(message, self.max)?;
        self.inner.write_all(&frame)?;
        self.inner.flush()?;
        Ok(())
    }
}

/// Writes frames to an async stream, one `write_all` per frame.
#[derive(Debug)]
pub struct AsyncFrameWriter<W> {
    inner: W,
    max: MaxPayload,
}

impl<W> AsyncFrameWriter<W> {
    /// A writer with the given payload cap.
    pub fn new(inner: W, max: MaxPayload) -> Self {
        Self { inner, max }
    }
}

impl<W: AsyncWrite + Unpin> AsyncFrameWriter<W> {
    /// Writes and flushes one message.
    pub async fn write<T: Serialize>(&mut self, message: &T) -> Result<(), FrameError> {
        let frame = encode_frame(message, self.max)?;
        self.inner.write_all(&frame).await?;
        self.inner.flush().await?;
        Ok(())
    }
}
