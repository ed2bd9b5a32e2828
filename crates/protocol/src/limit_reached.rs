//! The limit that ended a run, as the result and the session file's ending
//! line both name it. Its own module so that `result` and `session` share
//! it without importing each other.
//!
//! Types only: nothing here decides which limit ended a run.

use serde::{Deserialize, Serialize};

/// The limit that ended a run: its name as the session header and the
/// result schema spell it (`limits.wallTimeoutMs` is `wallTimeoutMs`, the
/// budget's `maxTurns` is `maxTurns`) and the value in force, in that
/// limit's unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitReached {
    /// Which limit.
    pub name: LimitName,
    /// Its value in force (ms, bytes, count or dollars, as the name says).
    pub value: serde_json::Number,
}

/// The limits that can end a run, named as the schemas spell them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum LimitName {
    /// The wall timeout (ms).
    WallTimeoutMs,
    /// The idle timeout (ms).
    IdleTimeoutMs,
    /// Memory of the child's cgroup (bytes).
    MemoryBytes,
    /// Processes of the child's cgroup (count).
    Pids,
    /// Worker stdout (bytes).
    StdoutBytes,
    /// Worker stderr (bytes).
    StderrBytes,
    /// Bytes over the protocol socket.
    ProtocolBytes,
    /// Text returned to the parent (bytes).
    ReturnedTextBytes,
    /// Text returned to the parent (lines).
    ReturnedTextLines,
    /// Model turns of the budget (count).
    MaxTurns,
    /// Dollars of the budget.
    MaxCost,
    /// A name this version does not know, kept as written (a newer
    /// writer's). Never written by this one.
    #[serde(untagged)]
    Unknown(String),
}

impl LimitName {
    /// The name as written in JSON.
    pub fn as_str(&self) -> &str {
        match self {
            LimitName::WallTimeoutMs => "wallTimeoutMs",
            LimitName::IdleTimeoutMs => "idleTimeoutMs",
            LimitName::MemoryBytes => "memoryBytes",
            LimitName::Pids => "pids",
            LimitName::StdoutBytes => "stdoutBytes",
            LimitName::StderrBytes => "stderrBytes",
            LimitName::ProtocolBytes => "protocolBytes",
            LimitName::ReturnedTextBytes => "returnedTextBytes",
            LimitName::ReturnedTextLines => "returnedTextLines",
            LimitName::MaxTurns => "maxTurns",
            LimitName::MaxCost => "maxCost",
            LimitName::Unknown(name) => name,
        }
    }
}

impl LimitReached {
    /// A limit counted in whole units (ms, bytes, turns).
    pub fn count(name: LimitName, value: u64) -> Self {
        Self {
            name,
            value: value.into(),
        }
    }

    /// A limit in dollars; `None` for a value JSON cannot hold (NaN).
    pub fn dollars(name: LimitName, value: f64) -> Option<Self> {
        Some(Self {
            name,
            value: serde_json::Number::from_f64(value)?,
        })
    }
}
