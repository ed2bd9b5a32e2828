//! One live record: what a run is doing now, as its supervisor writes it
//! (one JSON line) and seals it (a MAC under this user's session key, in a
//! domain of its own), and how a reader checks the seal.
//!
//! Pure: bytes in, bytes or a verdict out. It reads no file, and it says
//! nothing about whether the writer lives ([`super::reader`] does).

use serde::{Deserialize, Serialize};

use crate::session::key::{SessionKey, hex_decode, hex_encode};

/// Kept apart from the session chain's and any other use of the key: a
/// live record's MAC never vouches for a session line, nor one's for it.
const DOMAIN: &[u8] = b"subagent live record v1\0";

/// The seal spliced before a record's closing brace: `,"mac":"<hex>"}`.
const MAC_HEAD: &[u8] = b",\"mac\":\"";
const MAC_TAIL: &[u8] = b"\"}";
const MAC_LEN: usize = MAC_HEAD.len() + 64 + MAC_TAIL.len();

/// Longest text field a record keeps (agent, model, tool name), in
/// characters: a name a model or a file chose cannot grow a record.
pub const MAX_NAME_CHARS: usize = 128;

/// Largest record a reader reads, bytes: a record is a few hundred bytes;
/// a planted file of gigabytes is read no further than this.
pub const MAX_RECORD_BYTES: u64 = 8 * 1024;

/// What a run is doing now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LiveState {
    /// Waiting for one of the supervisor's `max_concurrent` slots.
    Queued,
    /// Admitted; its worker is being started or has not said anything yet.
    Starting,
    /// A model request is out and nothing of its answer has come back.
    WaitingForModel,
    /// The model's answer is streaming in.
    Streaming,
    /// A tool runs (the record names it).
    RunningTool,
    /// The worker is between steps: the model's message is in, no tool
    /// runs and the next request has not gone out.
    Working,
    /// The worker reported its result (or was stopped); the run is being
    /// wound up (its tree reaped, its session file closed).
    Finishing,
}

impl LiveState {
    /// The words `subagent ps` shows, e.g. `waiting for the model`.
    pub fn words(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Starting => "starting",
            Self::WaitingForModel => "waiting for the model",
            Self::Streaming => "streaming",
            Self::RunningTool => "running tool",
            Self::Working => "working",
            Self::Finishing => "finishing",
        }
    }
}

/// A run's live record. Times are Unix milliseconds (wall clock: the
/// reader is another process).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LiveRecord {
    /// The run's id (its session file's).
    pub run_id: String,
    /// The run id of the run that started it, for a nested run.
    pub parent_run_id: Option<String>,
    /// The agent it runs.
    pub agent: String,
    /// The model it asks.
    pub model: String,
    /// What it is doing now.
    pub state: LiveState,
    /// The tool that runs, in state `running_tool`.
    pub tool: Option<String>,
    /// When it entered its state.
    pub state_since_ms: u64,
    /// When its worker last sent an event (or when it started, before
    /// the first); kept to within [`super::writer::REFRESH`].
    pub last_event_ms: u64,
    /// When the run started.
    pub started_ms: u64,
    /// Model turns begun.
    pub turns: u32,
    /// Prompt tokens billed at the full price, all finished turns.
    pub input_tokens: u64,
    /// Prompt tokens the provider's cache handled.
    pub cached_input_tokens: u64,
    /// Completion tokens, all finished turns.
    pub output_tokens: u64,
    /// US dollars so far (0 for unknown or local models).
    pub cost: f64,
    /// The worker's pid, once it was spawned.
    pub worker_pid: Option<u32>,
    /// The supervisor's pid: the process that holds the record's lock.
    pub supervisor_pid: u32,
    /// The supervisor's start time (`/proc/<pid>/stat`, clock ticks after
    /// boot): with the pid, which process that is.
    pub supervisor_start: u64,
    /// The run's session file, once created.
    pub session_file: Option<String>,
}

/// Why a record's bytes are not believed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// Not one line ending in a seal.
    #[error("not a sealed live record")]
    Unsealed,
    /// The seal does not hold under this key: planted, edited, or torn by
    /// a read during a rewrite.
    #[error("its seal does not hold under this user's key")]
    BadSeal,
    /// Sealed, but not a record of this version.
    #[error("sealed, but not a live record this version reads")]
    Unreadable,
}

impl LiveRecord {
    /// The record as one sealed line (with its newline).
    pub fn seal(&self, key: &SessionKey) -> Vec<u8> {
        // Serializing a struct of strings and numbers does not fail; an
        // empty object would only fail to open.
        let body = serde_json::to_vec(self).unwrap_or_else(|_| b"{}".to_vec());
        let head = body.strip_suffix(b"}").unwrap_or(&body);
        let mac = key.mac(DOMAIN, head);
        let mut line = Vec::with_capacity(head.len() + MAC_LEN + 1);
        line.extend_from_slice(head);
        line.extend_from_slice(MAC_HEAD);
        line.extend_from_slice(hex_encode(&mac).as_bytes());
        line.extend_from_slice(MAC_TAIL);
        line.push(b'\n');
        line
    }

    /// The record in `bytes` (its first line), when its seal holds.
    pub fn open(key: &SessionKey, bytes: &[u8]) -> Result<Self, RecordError> {
        let end = bytes
            .iter()
            .position(|b| *b == b'\n')
            .ok_or(RecordError::Unsealed)?;
        let line = &bytes[..end];
        let at = line
            .len()
            .checked_sub(MAC_LEN)
            .ok_or(RecordError::Unsealed)?;
        let (head, member) = line.split_at(at);
        let hex = member
            .strip_prefix(MAC_HEAD)
            .and_then(|m| m.strip_suffix(MAC_TAIL))
            .and_then(|h| std::str::from_utf8(h).ok())
            .ok_or(RecordError::Unsealed)?;
        let mut carried = [0u8; 32];
        if !hex_decode(hex, &mut carried) {
            return Err(RecordError::Unsealed);
        }
        let expected = key.mac(DOMAIN, head);
        if !constant_time_eq(&expected, &carried) {
            return Err(RecordError::BadSeal);
        }
        let mut body = head.to_vec();
        body.push(b'}');
        serde_json::from_slice(&body).map_err(|_| RecordError::Unreadable)
    }
}

/// Compares two MACs without stopping at the first difference.
fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `text` cut to [`MAX_NAME_CHARS`] characters.
pub fn bounded(text: &str) -> String {
    subagent_protocol::text::prefix_chars(text, MAX_NAME_CHARS).to_owned()
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;

/// A record for the tests of the modules beside this one.
#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    pub(crate) fn record() -> LiveRecord {
        LiveRecord {
            run_id: "0190aaaabbbbccccddddeeeeffff0000".into(),
            parent_run_id: None,
            agent: "general".into(),
            model: "m".into(),
            state: LiveState::Starting,
            tool: None,
            state_since_ms: 1,
            last_event_ms: 1,
            started_ms: 1,
            turns: 0,
            input_tokens: 0,
            cached_input_tokens: 0,
            output_tokens: 0,
            cost: 0.0,
            worker_pid: None,
            supervisor_pid: 1,
            supervisor_start: 1,
            session_file: None,
        }
    }
}
