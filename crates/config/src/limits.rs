//! The limits a run can be given from four places (flags, agent files,
//! the project config, the user config) under one list of names, so
//! `--idle-timeout`, `idleTimeout:` and `idle_timeout =` cannot drift apart.
//!
//! In: a key and its raw value (text with units, or a number). Out: a typed
//! [`LimitValue`], or a message saying what is accepted. Applying a
//! [`LimitSet`] to a request's `Limits`, `Budget` and depth is here too.
//! It reads nothing from the disk or the environment.

use std::collections::BTreeMap;
use std::fmt;

use subagent_protocol::{Budget, Limits};

use subagent_session::units::{ByteSize, Timespan, parse_duration, parse_size};

/// One limit that can be set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LimitKey {
    /// Wall-clock limit of the run.
    Timeout,
    /// Time without progress before the run is stopped.
    IdleTimeout,
    /// Worker memory (cgroup).
    Memory,
    /// Worker processes and threads (cgroup).
    Pids,
    /// Worker stdout kept before the run is killed.
    StdoutLimit,
    /// Worker stderr kept before the run is killed.
    StderrLimit,
    /// Text returned to the caller before truncation.
    ReturnLimit,
    /// Wall-clock limit of one tool call.
    ToolTimeout,
    /// Memory of one tool process tree.
    ToolMemory,
    /// Processes of one tool process tree.
    ToolPids,
    /// Growth of the workspace by the run's process tools.
    ToolDisk,
    /// Model turns.
    MaxTurns,
    /// Dollars.
    MaxCost,
    /// Deepest nesting of subagents.
    MaxDepth,
}

/// What kind of value a key takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitUnit {
    /// `90s`, `15m`, `1h`; a plain number is seconds.
    Duration,
    /// `512M`, `2G`; a plain number is bytes.
    Size,
    /// A whole number, 1 or more.
    Count,
    /// Dollars, 0 or more.
    Dollars,
}

/// A parsed limit value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LimitValue {
    /// Milliseconds.
    Ms(u64),
    /// Bytes.
    Bytes(u64),
    /// A count.
    Count(u64),
    /// US dollars.
    Dollars(f64),
}

// Dollars are finite and not negative (`LimitKey::parse` refuses others),
// so equality is an equivalence and the overrides that hold limits can key
// a map (`RunOverrides`).
impl Eq for LimitValue {}

impl std::hash::Hash for LimitValue {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match *self {
            LimitValue::Ms(n) | LimitValue::Bytes(n) | LimitValue::Count(n) => n.hash(state),
            // -0.0 == 0.0, so both hash as 0.0.
            LimitValue::Dollars(usd) => (if usd == 0.0 { 0.0 } else { usd }).to_bits().hash(state),
        }
    }
}

impl fmt::Display for LimitValue {
    /// As a user would write it: `15m`, `512M`, `64`, `0.5`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LimitValue::Ms(ms) => write!(f, "{}", Timespan { ms }),
            LimitValue::Bytes(bytes) => write!(f, "{}", ByteSize(bytes)),
            LimitValue::Count(n) => write!(f, "{n}"),
            LimitValue::Dollars(usd) => write!(f, "{usd}"),
        }
    }
}

/// A raw value as a file holds it.
#[derive(Debug, Clone, Copy)]
pub enum RawLimit<'a> {
    /// Text, e.g. `"15m"`.
    Text(&'a str),
    /// An integer, e.g. `64`.
    Integer(i64),
    /// A float, e.g. `0.5`.
    Float(f64),
}

impl LimitKey {
    /// Every key, in the order listings show them.
    pub const ALL: [LimitKey; 14] = [
        LimitKey::Timeout,
        LimitKey::IdleTimeout,
        LimitKey::Memory,
        LimitKey::Pids,
        LimitKey::StdoutLimit,
        LimitKey::StderrLimit,
        LimitKey::ReturnLimit,
        LimitKey::ToolTimeout,
        LimitKey::ToolMemory,
        LimitKey::ToolPids,
        LimitKey::ToolDisk,
        LimitKey::MaxTurns,
        LimitKey::MaxCost,
        LimitKey::MaxDepth,
    ];

    /// The key in `config.toml`'s `[limits]` (snake_case, the flag's name).
    pub fn config_key(self) -> &'static str {
        match self {
            LimitKey::Timeout => "timeout",
            LimitKey::IdleTimeout => "idle_timeout",
            LimitKey::Memory => "memory",
            LimitKey::Pids => "pids",
            LimitKey::StdoutLimit => "stdout_limit",
            LimitKey::StderrLimit => "stderr_limit",
            LimitKey::ReturnLimit => "return_limit",
            LimitKey::ToolTimeout => "tool_timeout",
            LimitKey::ToolMemory => "tool_memory",
            LimitKey::ToolPids => "tool_pids",
            LimitKey::ToolDisk => "tool_disk",
            LimitKey::MaxTurns => "max_turns",
            LimitKey::MaxCost => "max_cost",
            LimitKey::MaxDepth => "max_depth",
        }
    }

    /// The key in an agent file's frontmatter (camelCase, as Claude Code's
    /// `maxTurns`).
    pub fn agent_key(self) -> &'static str {
        match self {
            LimitKey::Timeout => "timeout",
            LimitKey::IdleTimeout => "idleTimeout",
            LimitKey::Memory => "memory",
            LimitKey::Pids => "pids",
            LimitKey::StdoutLimit => "stdoutLimit",
            LimitKey::StderrLimit => "stderrLimit",
            LimitKey::ReturnLimit => "returnLimit",
            LimitKey::ToolTimeout => "toolTimeout",
            LimitKey::ToolMemory => "toolMemory",
            LimitKey::ToolPids => "toolPids",
            LimitKey::ToolDisk => "toolDisk",
            LimitKey::MaxTurns => "maxTurns",
            LimitKey::MaxCost => "maxCost",
            LimitKey::MaxDepth => "maxDepth",
        }
    }

    /// The `subagent run` flag.
    pub fn flag(self) -> String {
        format!("--{}", self.config_key().replace('_', "-"))
    }

    /// The key whose config name is `name`.
    pub fn from_config_key(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.config_key() == name)
    }

    /// The kind of value it takes.
    pub fn unit(self) -> LimitUnit {
        match self {
            LimitKey::Timeout | LimitKey::IdleTimeout | LimitKey::ToolTimeout => {
                LimitUnit::Duration
            }
            LimitKey::Memory
            | LimitKey::StdoutLimit
            | LimitKey::StderrLimit
            | LimitKey::ReturnLimit
            | LimitKey::ToolMemory
            | LimitKey::ToolDisk => LimitUnit::Size,
            LimitKey::Pids | LimitKey::ToolPids | LimitKey::MaxTurns | LimitKey::MaxDepth => {
                LimitUnit::Count
            }
            LimitKey::MaxCost => LimitUnit::Dollars,
        }
    }

    /// Reads `raw` as this key's value; the error says what is accepted.
    pub fn parse(self, raw: RawLimit<'_>) -> Result<LimitValue, String> {
        let text = match raw {
            RawLimit::Text(text) => text.to_owned(),
            RawLimit::Integer(n) => n.to_string(),
            RawLimit::Float(x) => x.to_string(),
        };
        match self.unit() {
            LimitUnit::Duration => parse_duration(&text).map(|t| LimitValue::Ms(t.ms)),
            LimitUnit::Size => parse_size(&text).map(|b| LimitValue::Bytes(b.0)),
            LimitUnit::Count => {
                let max = match self {
                    LimitKey::MaxTurns | LimitKey::MaxDepth => u64::from(u32::MAX),
                    _ => u64::MAX,
                };
                match text.trim().parse::<u64>() {
                    Ok(n) if (1..=max).contains(&n) => Ok(LimitValue::Count(n)),
                    _ => Err(format!(
                        "`{text}` is not a count; use a whole number, 1 or more (e.g. 64)"
                    )),
                }
            }
            LimitUnit::Dollars => match text.trim().parse::<f64>() {
                Ok(usd) if usd.is_finite() && usd >= 0.0 => Ok(LimitValue::Dollars(usd)),
                _ => Err(format!(
                    "`{text}` is not an amount of dollars; use a number such as 0.50 or 2"
                )),
            },
        }
    }

    /// This key's value in `limits`, `budget` and `max_depth` (the defaults
    /// when those are the defaults).
    pub fn value_in(self, limits: &Limits, budget: &Budget, max_depth: u32) -> Option<LimitValue> {
        Some(match self {
            LimitKey::Timeout => LimitValue::Ms(limits.wall_timeout_ms),
            LimitKey::IdleTimeout => LimitValue::Ms(limits.idle_timeout_ms),
            LimitKey::Memory => LimitValue::Bytes(limits.memory_bytes),
            LimitKey::Pids => LimitValue::Count(limits.pids),
            LimitKey::StdoutLimit => LimitValue::Bytes(limits.stdout_bytes),
            LimitKey::StderrLimit => LimitValue::Bytes(limits.stderr_bytes),
            LimitKey::ReturnLimit => LimitValue::Bytes(limits.returned_text_bytes),
            LimitKey::ToolTimeout => LimitValue::Ms(limits.tool_timeout_ms),
            LimitKey::ToolMemory => LimitValue::Bytes(limits.tool_memory_bytes),
            LimitKey::ToolPids => LimitValue::Count(limits.tool_pids),
            LimitKey::ToolDisk => LimitValue::Bytes(limits.tool_disk_bytes),
            LimitKey::MaxTurns => LimitValue::Count(u64::from(budget.max_turns)),
            LimitKey::MaxCost => LimitValue::Dollars(budget.max_cost?),
            LimitKey::MaxDepth => LimitValue::Count(u64::from(max_depth)),
        })
    }
}

/// Limits set in one place; keys not set are left to the places below it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct LimitSet {
    values: BTreeMap<LimitKey, LimitValue>,
}

impl LimitSet {
    /// Sets `key` (a later set replaces an earlier one).
    pub fn set(&mut self, key: LimitKey, value: LimitValue) {
        self.values.insert(key, value);
    }

    /// `key`'s value when set here.
    pub fn get(&self, key: LimitKey) -> Option<LimitValue> {
        self.values.get(&key).copied()
    }

    /// True when nothing is set.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The keys set here with their values, in [`LimitKey::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (LimitKey, LimitValue)> + '_ {
        self.values.iter().map(|(k, v)| (*k, *v))
    }

    /// Writes every value set here into `limits`, `budget` and `max_depth`.
    /// A value of the wrong kind for its key (impossible through
    /// [`LimitKey::parse`]) is skipped.
    pub fn apply(&self, limits: &mut Limits, budget: &mut Budget, max_depth: &mut u32) {
        for (key, value) in self.iter() {
            match (key, value) {
                (LimitKey::Timeout, LimitValue::Ms(ms)) => limits.wall_timeout_ms = ms,
                (LimitKey::IdleTimeout, LimitValue::Ms(ms)) => limits.idle_timeout_ms = ms,
                (LimitKey::ToolTimeout, LimitValue::Ms(ms)) => limits.tool_timeout_ms = ms,
                (LimitKey::Memory, LimitValue::Bytes(b)) => limits.memory_bytes = b,
                (LimitKey::StdoutLimit, LimitValue::Bytes(b)) => limits.stdout_bytes = b,
                (LimitKey::StderrLimit, LimitValue::Bytes(b)) => limits.stderr_bytes = b,
                (LimitKey::ReturnLimit, LimitValue::Bytes(b)) => limits.returned_text_bytes = b,
                (LimitKey::ToolMemory, LimitValue::Bytes(b)) => limits.tool_memory_bytes = b,
                (LimitKey::ToolDisk, LimitValue::Bytes(b)) => limits.tool_disk_bytes = b,
                (LimitKey::Pids, LimitValue::Count(n)) => limits.pids = n,
                (LimitKey::ToolPids, LimitValue::Count(n)) => limits.tool_pids = n,
                (LimitKey::MaxTurns, LimitValue::Count(n)) => {
                    budget.max_turns = u32::try_from(n).unwrap_or(u32::MAX);
                }
                (LimitKey::MaxDepth, LimitValue::Count(n)) => {
                    *max_depth = u32::try_from(n).unwrap_or(u32::MAX);
                }
                (LimitKey::MaxCost, LimitValue::Dollars(usd)) => budget.max_cost = Some(usd),
                _ => {}
            }
        }
    }
}

impl LimitSet {
    /// Limits from a JSON object, as requests and task lines give them: a
    /// key is a config name (`max_turns`) or an agent-file name
    /// (`maxTurns`), a value text with units (`"15m"`) or a number. The
    /// error names the key and what is accepted.
    pub fn from_json(
        map: impl IntoIterator<Item = (String, serde_json::Value)>,
    ) -> Result<Self, String> {
        let mut set = LimitSet::default();
        for (name, value) in map {
            let Some(key) = LimitKey::ALL
                .into_iter()
                .find(|k| k.config_key() == name || k.agent_key() == name)
            else {
                // Named as the request and task-line schemas spell them
                // (camelCase, as in agent files).
                let known: Vec<&str> = LimitKey::ALL.iter().map(|k| k.agent_key()).collect();
                return Err(format!(
                    "limits.{name}: unknown limit; the limits are {}",
                    known.join(", ")
                ));
            };
            let raw = match &value {
                serde_json::Value::String(text) => RawLimit::Text(text),
                serde_json::Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                    (Some(i), _) => RawLimit::Integer(i),
                    (None, Some(x)) => RawLimit::Float(x),
                    (None, None) => return Err(format!("limits.{name}: `{n}` is out of range")),
                },
                other => {
                    return Err(format!(
                        "limits.{name}: `{other}` is neither text with units nor a number"
                    ));
                }
            };
            let parsed = key.parse(raw).map_err(|m| format!("limits.{name}: {m}"))?;
            set.set(key, parsed);
        }
        Ok(set)
    }
}
