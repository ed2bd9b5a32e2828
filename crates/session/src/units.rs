//! Sizes and durations as a person types them on the command line: `512M`,
//! `2GiB`, `90s`, `15m`, `3d`, or a plain number.
//!
//! These are the `value_parser`s of `subagent run`'s limit flags
//! ([`parse_size`], [`parse_duration`]) and of `subagent sessions ls --since`
//! and `sessions gc --older-than` ([`parse_age`]); one reader of
//! number-and-unit pieces serves all of them. Each value
//! type also prints itself in the same notation, so the defaults `--help`
//! shows (taken from `Limits::default()`) read like what a user would type,
//! and clap can parse them back. A value that cannot be read is refused with
//! a message saying what is accepted; clap turns it into a usage error
//! (exit 2) that names the flag.

use std::fmt;
use std::time::Duration;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;

const SECOND_MS: u64 = 1000;
const MINUTE_MS: u64 = 60 * SECOND_MS;
const HOUR_MS: u64 = 60 * MINUTE_MS;
const DAY_MS: u64 = 24 * HOUR_MS;

/// A number of bytes, read with binary (1024) K, M and G suffixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteSize(pub u64);

impl fmt::Display for ByteSize {
    /// The largest whole unit: `2G`, `512M`, `200K`, else plain bytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = self.0;
        for (unit, suffix) in [(GIB, "G"), (MIB, "M"), (KIB, "K")] {
            if bytes != 0 && bytes.is_multiple_of(unit) {
                return write!(f, "{}{suffix}", bytes / unit);
            }
        }
        write!(f, "{bytes}")
    }
}

/// A span of time, kept in milliseconds as `Limits` keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timespan {
    /// The span in milliseconds.
    pub ms: u64,
}

impl fmt::Display for Timespan {
    /// The largest whole unit: `15m`, `90s`, `1h`, else `ms`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.ms;
        for (unit, suffix) in [(HOUR_MS, "h"), (MINUTE_MS, "m"), (SECOND_MS, "s")] {
            if ms != 0 && ms.is_multiple_of(unit) {
                return write!(f, "{}{suffix}", ms / unit);
            }
        }
        write!(f, "{ms}ms")
    }
}

/// Reads a size: a whole number with an optional K, M or G (1024-based,
/// any case), optionally followed by `B` or `iB`; a bare number (or `B`)
/// is bytes. Zero is refused: no limit of zero bytes lets a run start.
pub fn parse_size(value: &str) -> Result<ByteSize, String> {
    let not_a_size =
        || format!("`{value}` is not a size; use a number with K, M or G (e.g. 512M, 2G)");
    let text = value.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, suffix) = text.split_at(digits_end);
    let number: u64 = digits.parse().map_err(|_| not_a_size())?;
    let multiplier = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => KIB,
        "m" | "mb" | "mib" => MIB,
        "g" | "gb" | "gib" => GIB,
        _ => return Err(not_a_size()),
    };
    if number == 0 {
        return Err(format!(
            "`{value}` is zero; a limit must be at least 1 byte"
        ));
    }
    number
        .checked_mul(multiplier)
        .map(ByteSize)
        .ok_or_else(|| format!("`{value}` is too large"))
}

/// Reads a duration: humantime-style number-and-unit pieces (`90s`, `15m`,
/// `1h`, `1h30m`, `500ms`, `3d`; units `ms`, `s`, `m`, `h`, `d` and their
/// long spellings), or a plain number of seconds, which is what the two timeout
/// flags took before units, so existing scripts keep working. Zero is
/// refused: it would stop every run before it starts.
pub fn parse_duration(value: &str) -> Result<Timespan, String> {
    let not_a_duration = || {
        format!(
            "`{value}` is not a duration; use seconds or a number with ms, s, m or h (e.g. 90s, 15m, 1h)"
        )
    };
    let text = value.trim();
    if text.is_empty() {
        return Err(not_a_duration());
    }
    let ms = if text.bytes().all(|b| b.is_ascii_digit()) {
        let secs: u64 = text.parse().map_err(|_| not_a_duration())?;
        secs.checked_mul(SECOND_MS)
    } else {
        sum_of_pieces(text).ok_or_else(not_a_duration)?
    };
    match ms {
        None => Err(format!("`{value}` is too long")),
        Some(0) => Err(format!("`{value}` is zero; a timeout must be longer")),
        Some(ms) => Ok(Timespan { ms }),
    }
}

/// Reads an age as `sessions ls --since` and `sessions gc --older-than`
/// take it: the same number-and-unit pieces as [`parse_duration`] (`90s`,
/// `15m`, `2h`, `3d`, `1d12h`), but a unit is required, since a bare number
/// has never been an age, and zero is allowed (`--since 0s` lists nothing
/// older than now, `--older-than 0s` matches every finished run).
pub fn parse_age(value: &str) -> Result<Duration, String> {
    let not_an_age = || {
        format!("`{value}` is not an age; use a number with s, m, h or d (e.g. 90s, 15m, 2h, 3d)")
    };
    let text = value.trim();
    if text.is_empty() || text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(not_an_age());
    }
    match sum_of_pieces(text).ok_or_else(not_an_age)? {
        Some(ms) => Ok(Duration::from_millis(ms)),
        None => Err(format!("`{value}` is too long")),
    }
}

/// `1h30m` as milliseconds: `None` when a piece is not number-and-unit,
/// `Some(None)` when the sum overflows.
fn sum_of_pieces(text: &str) -> Option<Option<u64>> {
    let mut rest = text;
    let mut total = Some(0u64);
    while !rest.is_empty() {
        rest = rest.trim_start();
        let digits_end = rest.find(|c: char| !c.is_ascii_digit())?;
        let (digits, after) = rest.split_at(digits_end);
        let number: u64 = digits.parse().ok()?;
        let unit_end = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_end);
        let unit_ms = match unit {
            "ms" | "msec" | "millis" => 1,
            "s" | "sec" | "secs" | "second" | "seconds" => SECOND_MS,
            "m" | "min" | "mins" | "minute" | "minutes" => MINUTE_MS,
            "h" | "hr" | "hrs" | "hour" | "hours" => HOUR_MS,
            "d" | "day" | "days" => DAY_MS,
            _ => return None,
        };
        total = total.and_then(|t| number.checked_mul(unit_ms).and_then(|p| t.checked_add(p)));
        rest = after;
    }
    Some(total)
}

#[cfg(test)]
#[path = "units_tests.rs"]
mod tests;
