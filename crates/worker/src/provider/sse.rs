//! Server-sent events: the one incremental parser behind every provider's
//! stream.
//!
//! Bytes go in as the network delivers them, split anywhere (mid-line,
//! between a CR and its LF, inside a UTF-8 character); complete events come
//! out. The rules are the WHATWG EventSource ones: lines end in CRLF, LF or
//! CR; a line starting with `:` is a comment; the `data:` lines of one event
//! join with `\n`; one space after the colon is dropped; a blank line
//! dispatches the event; a leading byte-order mark is ignored.
//!
//! It knows nothing of any provider's JSON (the `[DONE]` sentinel of the
//! OpenAI dialects is only recognised by [`SseEvent::is_done`]), and it never
//! buffers without bound: a line or an event larger than
//! [`MAX_SSE_EVENT_BYTES`] is an error.

/// Largest line or event the parser buffers, in bytes. Sized for the
/// Responses API's `response.completed` event, which repeats the whole output
/// of the turn in one line; ordinary deltas are a few hundred bytes.
pub const MAX_SSE_EVENT_BYTES: usize = 32 * 1024 * 1024;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; empty when the event had none (the OpenAI Chat
    /// dialect never names its events).
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

impl SseEvent {
    /// True for the `data: [DONE]` sentinel that ends OpenAI Chat streams.
    pub fn is_done(&self) -> bool {
        self.data.trim() == "[DONE]"
    }
}

/// Why the byte stream is not a well-formed event stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// A line or an event exceeded [`MAX_SSE_EVENT_BYTES`].
    #[error("an event stream line or event exceeded {MAX_SSE_EVENT_BYTES} bytes")]
    TooLarge,
    /// The stream ended inside a line, so the last event was cut off.
    #[error("the stream ended in the middle of an event (connection cut?)")]
    Truncated,
}

/// Incremental SSE parser. Feed it with [`SseParser::push`], end it with
/// [`SseParser::finish`].
#[derive(Debug, Default)]
pub struct SseParser {
    /// The current, not yet terminated line.
    line: Vec<u8>,
    /// The previous chunk ended with CR: a LF at the start of the next one
    /// belongs to the same line break.
    after_cr: bool,
    /// No line has been completed yet (the BOM may only lead the first one).
    seen_line: bool,
    event: String,
    data: String,
    /// A `data` field was seen since the last dispatch (an event with an
    /// empty data line still dispatches).
    has_data: bool,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next bytes of the stream and appends every event they
    /// complete to `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut rest = bytes;
        while !rest.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if rest[0] == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            match rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
                None => {
                    self.extend_line(rest)?;
                    break;
                }
                Some(end) => {
                    self.extend_line(&rest[..end])?;
                    self.after_cr = rest[end] == b'\r';
                    self.end_line(out)?;
                    rest = &rest[end + 1..];
                }
            }
        }
        Ok(())
    }

    /// Ends the stream. An event whose lines were all complete but that
    /// lacked the final blank line is still returned (some servers close
    /// right after the last `data:` line); a cut inside a line is
    /// [`SseError::Truncated`].
    pub fn finish(&mut self) -> Result<Option<SseEvent>, SseError> {
        if !self.line.is_empty() {
            return Err(SseError::Truncated);
        }
        Ok(self.dispatch())
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len() + bytes.len() > MAX_SSE_EVENT_BYTES {
            return Err(SseError::TooLarge);
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut line = std::mem::take(&mut self.line);
        if !self.seen_line {
            self.seen_line = true;
            if line.starts_with(BOM) {
                line.drain(..BOM.len());
            }
        }
        if line.is_empty() {
            out.extend(self.dispatch());
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (&line[..], &[][..]),
        };
        match field {
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            b"data" => {
                if self.data.len() + value.len() + 1 > MAX_SSE_EVENT_BYTES {
                    return Err(SseError::TooLarge);
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
            }
            // `id` and `retry` steer browser reconnection, which a
            // one-shot model request never does.
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = std::mem::take(&mut self.event);
        let data = std::mem::take(&mut self.data);
        if !std::mem::replace(&mut self.has_data, false) {
            return None;
        }
        Some(SseEvent { event, data })
    }
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
