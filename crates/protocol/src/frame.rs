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
        let Some(len) = read_header_async(&mut self.inner, self.max).await? else {
            return Ok(None);
        };
        Ok(Some(read_payload_async(&mut self.inner, len).await?))
    }
}

/// Reads one frame header and checks its length against `max`. `Ok(None)`
/// is a clean end of stream at a frame boundary; a header cut short is
/// [`FrameError::Truncated`]. With the length known before any payload is
/// read, a caller can wait for room for it first (the supervisor's frame
/// budget does).
pub async fn read_header_async<R: AsyncRead + Unpin>(
    reader: &mut R,
    max: MaxPayload,
) -> Result<Option<usize>, FrameError> {
    let mut header = [0u8; HEADER_LEN];
    match read_full_async(reader, &mut header).await? {
        0 => Ok(None),
        HEADER_LEN => Ok(Some(checked_len(header, max)?)),
        got => Err(FrameError::Truncated {
            expected: HEADER_LEN,
            got,
        }),
    }
}

/// Reads a payload of `len` bytes (from [`read_header_async`]) into a buffer
/// of exactly that size and decodes it; the buffer is dropped on return.
pub async fn read_payload_async<T: DeserializeOwned, R: AsyncRead + Unpin>(
    reader: &mut R,
    len: usize,
) -> Result<T, FrameError> {
    let mut payload = vec![0u8; len];
    let got = read_full_async(reader, &mut payload).await?;
    if got != len {
        return Err(FrameError::Truncated { expected: len, got });
    }
    Ok(codec::decode(&payload)?)
}

/// Bytes read ahead from the stream while a payload decodes in
/// [`read_payload_streaming`]: bincode reads a small field at a time, and
/// each read of the source may be a system call.
const STREAM_BUFFER: usize = 64 * 1024;

/// Reads and decodes a payload of `len` bytes (from a header) from a
/// blocking stream *as it arrives*: no buffer of the whole payload is ever
/// made, so a payload that is mostly one large string costs about its own
/// size, not twice it. Reads nothing past the payload. An end of stream
/// inside it is [`FrameError::Truncated`]; bytes the message leaves unused
/// are [`CodecError::TrailingBytes`] (and stay unread).
pub fn read_payload_streaming<T: DeserializeOwned, R: Read>(
    reader: R,
    len: usize,
) -> Result<T, FrameError> {
    let mut payload = Watched {
        inner: reader,
        ended: false,
        error: None,
    }
    .take(len as u64);
    let mut buffered = io::BufReader::with_capacity(STREAM_BUFFER.min(len.max(1)), &mut payload);
    let decoded = codec::decode_from_read(&mut buffered, len);
    let buffered_unread = buffered.buffer().len() as u64;
    drop(buffered);
    let unread = usize::try_from(payload.limit() + buffered_unread).unwrap_or(usize::MAX);
    let Watched { ended, error, .. } = payload.into_inner();
    match (decoded, error) {
        // The stream's own failure explains the decode error better.
        (Err(_), Some(error)) => Err(FrameError::Io(error)),
        (Err(_), None) if ended => Err(FrameError::Truncated {
            expected: len,
            got: len.saturating_sub(unread),
        }),
        (Err(e), None) => Err(e.into()),
        (Ok(_), _) if unread > 0 => Err(CodecError::TrailingBytes {
            consumed: len - unread,
            trailing: unread,
        }
        .into()),
        (Ok(message), _) => Ok(message),
    }
}

/// A stream that remembers whether it ended and its first error, so that a
/// decode error caused by either is reported as what it was.
struct Watched<R> {
    inner: R,
    ended: bool,
    error: Option<io::Error>,
}

impl<R: Read> Read for Watched<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.inner.read(buf) {
                Ok(0) if !buf.is_empty() => {
                    self.ended = true;
                    return Ok(0);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let told = io::Error::new(e.kind(), e.to_string());
                    self.error.get_or_insert(e);
                    return Err(told);
                }
                read => return read,
            }
        }
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
