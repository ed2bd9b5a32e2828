//! Timestamps as every JSON output writes them: RFC 3339, UTC, milliseconds.

use std::time::SystemTime;

/// `t` as `2026-11-22T12:00:00.123Z`.
pub fn rfc3339_ms(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

/// The current wall-clock time as [`rfc3339_ms`]. Wall time is for records
/// only; durations and deadlines always use monotonic clocks.
pub fn now_rfc3339_ms() -> String {
    rfc3339_ms(SystemTime::now())
}
