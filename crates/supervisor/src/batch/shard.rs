//! Which tasks one process of a scaled-out batch runs: `--shard i/n` owns
//! the ids whose FNV-1a 64 hash mod `n` is `i`.
//!
//! The hash is fixed (not std's per-process randomized hasher), so every
//! shard on every machine, and every later re-run, agrees on who owns an
//! id. `--shard auto` takes `i` (and `n` where the engine exports it) from
//! the job engine's environment:
//!
//! - Kubernetes Indexed Job: `JOB_COMPLETION_INDEX` is `i`; Kubernetes does
//!   not export the completion count, so `--shards n` must say it.
//! - Slurm job array: `SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN` is `i`
//!   (arrays may start at 1); `n` is `--shards`, else
//!   `SLURM_ARRAY_TASK_COUNT`.
//!
//! The environment is read only when `--shard auto` asks for it, so a stray
//! variable never changes what a plain `subagent batch` runs. It reads the
//! environment through the caller's function, never directly.

use std::fmt;

/// One shard: `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 0-based index, below `count`.
    pub index: u64,
    /// How many shards the batch has, 1 or more.
    pub count: u64,
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Why a shard spec cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// The spec is not `i/n` with `0 <= i < n`.
    #[error("--shard `{0}`: use i/n with 0 <= i < n (e.g. 0/4), or `auto`")]
    BadSpec(String),
    /// `--shard auto` found no job engine's variables.
    #[error(
        "--shard auto: neither JOB_COMPLETION_INDEX (Kubernetes Indexed Job) nor \
         SLURM_ARRAY_TASK_ID (Slurm array) is set; pass --shard i/n"
    )]
    NoEngine,
    /// An engine's variable is not a number.
    #[error("--shard auto: {var}=`{value}` is not a whole number")]
    BadVar {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// The shard count is unknown.
    #[error("--shard auto with {0}: pass --shards N (the number of shards)")]
    NoCount(&'static str),
    /// The index from the environment is not below the count.
    #[error("--shard auto: index {index} from {var} is not below the shard count {count}")]
    OutOfRange {
        /// The variable.
        var: &'static str,
        /// The index it gave.
        index: u64,
        /// The count.
        count: u64,
    },
    /// `--shards` without `--shard auto`.
    #[error("--shards only goes with --shard auto (--shard i/n says n itself)")]
    CountWithoutAuto,
}

impl Shard {
    /// The whole batch as one shard.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Reads `i/n`.
    pub fn parse(spec: &str) -> Result<Self, ShardError> {
        let bad = || ShardError::BadSpec(spec.to_owned());
        let (i, n) = spec.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }

    /// The shard for `--shard` (`i/n` or `auto`) and `--shards`, reading
    /// variables with `env` only for `auto` (see the module doc).
    pub fn resolve(
        spec: Option<&str>,
        shards: Option<u64>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ShardError> {
        match spec {
            None if shards.is_some() => Err(ShardError::CountWithoutAuto),
            None => Ok(Self::ALL),
            Some("auto") => from_env(shards, env),
            Some(spec) if shards.is_some() => {
                Self::parse(spec)?;
                Err(ShardError::CountWithoutAuto)
            }
            Some(spec) => Self::parse(spec),
        }
    }

    /// True when this shard runs the task `id`.
    pub fn owns(&self, id: &str) -> bool {
        fnv1a64(id.as_bytes()) % self.count == self.index
    }
}

fn number(
    var: &'static str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<u64>, ShardError> {
    match env(var) {
        None => Ok(None),
        Some(value) => value
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| ShardError::BadVar { var, value }),
    }
}

fn from_env(
    shards: Option<u64>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Shard, ShardError> {
    let (var, index, count) = if let Some(index) = number("JOB_COMPLETION_INDEX", env)? {
        let count = shards.ok_or(ShardError::NoCount("JOB_COMPLETION_INDEX"))?;
        ("JOB_COMPLETION_INDEX", index, count)
    } else if let Some(id) = number("SLURM_ARRAY_TASK_ID", env)? {
        let min = number("SLURM_ARRAY_TASK_MIN", env)?.unwrap_or(0);
        let count = match shards {
            Some(n) => n,
            None => number("SLURM_ARRAY_TASK_COUNT", env)?
                .ok_or(ShardError::NoCount("SLURM_ARRAY_TASK_ID"))?,
        };
        ("SLURM_ARRAY_TASK_ID", id.saturating_sub(min), count)
    } else {
        return Err(ShardError::NoEngine);
    };
    if index >= count {
        return Err(ShardError::OutOfRange { var, index, count });
    }
    Ok(Shard { index, count })
}

/// FNV-1a, 64 bits: tiny, stable across platforms and releases, and
/// spreads short ids evenly enough for sharding (not for security).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET, |hash, b| (hash ^ u64::from(*b)).wrapping_mul(PRIME))
}

#[cfg(test)]
#[path = "shard_tests.rs"]
mod tests;
