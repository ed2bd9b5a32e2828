//! The keyed chain over a session file's lines: what makes a changed,
//! inserted, removed or reordered line, or a file subagent never wrote,
//! detectable (`subagent sessions verify`), and what resume, replay, batch
//! continuation and serve recovery check before they believe a file.
//!
//! Each line subagent writes ends with one more member, `"chain"`: the
//! HMAC-SHA256, under the user's [`super::key`], of the previous chained
//! line's value (32 zero bytes for a file's first line), the bytes of
//! any unchained lines just before this one (a line torn by a crash and
//! ended by the recovery that appended this one), and this line's own
//! bytes up to the member. The member is spliced in after serializing, so
//! the MAC covers the exact bytes on disk and no canonical form of JSON is
//! needed; the session-line schema allows members it does not name.
//!
//! What it does not catch: a file cut short after a whole line (that is a
//! true beginning of the file, as a crash leaves it), and two processes
//! appending to one file at once (the second's line chains onto a value
//! the first moved past, and verification reports it) -- within one
//! process, every appender of a file shares its chain
//! ([`super::writer`]).
//!
//! Pure: bytes in, bytes or a verdict out. It reads no file.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::key::{SessionKey, hex_decode, hex_encode};

/// A line's chain value: the MAC its successor chains onto.
pub type ChainValue = [u8; 32];

/// What a file's first line chains onto.
pub const GENESIS: ChainValue = [0; 32];

/// Kept apart from any other use of the key.
const DOMAIN: &[u8] = b"subagent session chain v1\0";

/// The member spliced before a line's closing brace: `,"chain":"<hex>"}`.
const MEMBER_HEAD: &[u8] = b",\"chain\":\"";
const MEMBER_TAIL: &[u8] = b"\"}";
/// Bytes of the chain member at the end of a chained line.
pub const MEMBER_LEN: usize = MEMBER_HEAD.len() + 64 + MEMBER_TAIL.len();

/// A line that cannot be sealed: not one JSON object with members.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a session line must be a JSON object with members to be chained")]
pub struct NotAnObject;

fn keyed(key: &SessionKey, prev: &ChainValue, covered: &[u8], head: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length: this never fails for 32 bytes, and
    // an empty key would still make a MAC no tool could forge without it.
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key.bytes())
        .unwrap_or_else(|_| <Hmac<Sha256> as KeyInit>::new(&Default::default()));
    mac.update(DOMAIN);
    mac.update(prev);
    mac.update(&(covered.len() as u64).to_be_bytes());
    mac.update(covered);
    mac.update(head);
    mac
}

/// `body` (one serialized JSON object, no newline) with its chain member
/// and a newline, and its value. `covered` is what lies between the
/// previous chained line and this one (unchained bytes, newlines
/// included), usually nothing.
pub fn seal(
    key: &SessionKey,
    prev: &ChainValue,
    covered: &[u8],
    body: &[u8],
) -> Result<(Vec<u8>, ChainValue), NotAnObject> {
    let head = match body {
        [b'{', .., b'}'] if body.len() > 2 => &body[..body.len() - 1],
        _ => return Err(NotAnObject),
    };
    let value: ChainValue = keyed(key, prev, covered, head)
        .finalize()
        .into_bytes()
        .into();
    let mut line = Vec::with_capacity(head.len() + MEMBER_LEN + 1);
    line.extend_from_slice(head);
    line.extend_from_slice(MEMBER_HEAD);
    line.extend_from_slice(hex_encode(&value).as_bytes());
    line.extend_from_slice(MEMBER_TAIL);
    line.push(b'\n');
    Ok((line, value))
}

/// A line (no newline) split into the bytes its MAC covers and the value
/// it carries; `None` when it carries none.
pub fn split(line: &[u8]) -> Option<(&[u8], ChainValue)> {
    let at = line.len().checked_sub(MEMBER_LEN)?;
    let (head, member) = line.split_at(at);
    let hex = member
        .strip_prefix(MEMBER_HEAD)?
        .strip_suffix(MEMBER_TAIL)?;
    let mut value = GENESIS;
    if !hex_decode(std::str::from_utf8(hex).ok()?, &mut value) {
        return None;
    }
    Some((head, value))
}

/// A file whose chain holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Chained lines.
    pub lines: usize,
    /// The last chained line's value (what the next line chains onto).
    pub last: ChainValue,
    /// Lines torn by a crash and covered by the chained line after them
    /// (1-based line numbers); like a torn tail, only bytes that do not
    /// parse pass as such.
    pub covered: Vec<usize>,
    /// A last line cut short without its newline (line number, bytes): a
    /// crash mid-write leaves one. Nothing vouches for it; it is accepted
    /// only when it does not parse (as the start of a line never does), so
    /// readers drop or refuse it as they do any torn line. A chained last
    /// line that lost only its newline is verified like any other.
    pub torn_tail: Option<(usize, usize)>,
}

/// Where and how a file's chain breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line_no} {kind}")]
pub struct ChainBreak {
    /// The first line that does not verify (1-based).
    pub line_no: usize,
    /// How.
    pub kind: BreakKind,
}

/// How a chain breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BreakKind {
    /// The line carries no chain value.
    #[error(
        "carries no chain value: subagent did not write it (the file was edited, or written \
         before session files were chained)"
    )]
    Unchained,
    /// The line's value is not the MAC of what precedes it.
    #[error(
        "does not match its chain value: it, or a line before it, was changed, inserted, \
         removed or reordered since subagent wrote it, or another user's key chained it"
    )]
    Mismatch,
}

/// Checks the chain over a whole file's bytes.
pub fn verify(key: &SessionKey, bytes: &[u8]) -> Result<Verified, ChainBreak> {
    let mut verified = Verified {
        lines: 0,
        last: GENESIS,
        covered: Vec::new(),
        torn_tail: None,
    };
    let mut pending: Vec<u8> = Vec::new();
    let mut pending_lines: Vec<usize> = Vec::new();
    let ends_with_newline = bytes.ends_with(b"\n");
    let pieces: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let last_piece = pieces.len().saturating_sub(1);
    for (i, piece) in pieces.into_iter().enumerate() {
        let line_no = i + 1;
        let torn = i == last_piece;
        if torn && (ends_with_newline || piece.is_empty()) {
            break;
        }
        let chained = split(piece);
        let Some((head, value)) = chained else {
            // Unchained bytes pass only as what a crash leaves: the start
            // of a line, which never parses. A whole line without a chain
            // value would otherwise reach every reader as a real one.
            if serde_json::from_slice::<serde::de::IgnoredAny>(piece).is_ok() {
                return Err(ChainBreak {
                    line_no,
                    kind: BreakKind::Unchained,
                });
            }
            if torn {
                verified.torn_tail = Some((line_no, piece.len()));
                break;
            }
            pending.extend_from_slice(piece);
            pending.push(b'\n');
            pending_lines.push(line_no);
            continue;
        };
        if keyed(key, &verified.last, &pending, head)
            .verify_slice(&value)
            .is_err()
        {
            return Err(ChainBreak {
                line_no: pending_lines.first().copied().unwrap_or(line_no),
                kind: if pending_lines.is_empty() {
                    BreakKind::Mismatch
                } else {
                    BreakKind::Unchained
                },
            });
        }
        verified.covered.append(&mut pending_lines);
        pending.clear();
        verified.last = value;
        verified.lines += 1;
    }
    if let Some(&line_no) = pending_lines.first() {
        return Err(ChainBreak {
            line_no,
            kind: BreakKind::Unchained,
        });
    }
    Ok(verified)
}

/// Every line of `text` chained anew under `key`, in order; lines that
/// carry a chain member lose the old one first. For tests and fixtures that
/// build session files: a file a tool rewrote is only "valid" again to
/// whoever holds the key.
pub fn reseal(key: &SessionKey, text: &str) -> Result<String, NotAnObject> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 8);
    let mut prev = GENESIS;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let body: Vec<u8> = match split(line.as_bytes()) {
            Some((head, _)) => [head, b"}"].concat(),
            None => line.as_bytes().to_vec(),
        };
        let (sealed, value) = seal(key, &prev, &[], &body)?;
        out.extend_from_slice(&sealed);
        prev = value;
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
#[path = "chain_tests.rs"]
mod tests;
