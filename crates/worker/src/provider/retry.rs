//! When and how long to wait before trying a failed request again, and the
//! record of the retries a provider made.
//!
//! Pure policy and data: what is retryable is decided where the failure is
//! seen (the provider's HTTP layer and turn driver); this module only turns
//! an attempt number and an optional `Retry-After` into a delay, and keeps
//! [`RetryNotice`]s until the agent loop collects them for the session file.
//! It must never sleep or do I/O itself, so every decision is unit-testable.

use std::time::{Duration, SystemTime};

use rand::Rng;

/// Attempts per request by default, the first one included. Three covers a
/// rate-limit blip or a restarting server without hiding a dead one.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// First backoff delay by default, in milliseconds; doubled per attempt.
pub const DEFAULT_BASE_DELAY: Duration = Duration::from_millis(500);

/// Longest computed backoff by default: beyond a few seconds an overloaded
/// provider is better reported than waited for.
pub const DEFAULT_MAX_DELAY: Duration = Duration::from_secs(8);

/// Longest `Retry-After` honoured by default, in seconds. A provider asking
/// for longer is capped to this: the worker's own idle limit (and the
/// supervisor's, 180 s by default) must not be eaten by one wait.
pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// How failed requests are retried. Only failures before the first byte of
/// the answer reached the caller are retried, and never an idle timeout or
/// a cancel.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Attempts per request, the first one included (1 disables retries).
    pub max_attempts: u32,
    /// Delay before the second attempt; doubled for each further one.
    pub base_delay: Duration,
    /// Cap of the computed (exponential) delay.
    pub max_delay: Duration,
    /// Cap of a provider's `Retry-After`.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            base_delay: DEFAULT_BASE_DELAY,
            max_delay: DEFAULT_MAX_DELAY,
            max_retry_after: DEFAULT_MAX_RETRY_AFTER,
        }
    }
}

impl RetryPolicy {
    /// The wait after failed attempt number `failed_attempt` (1-based).
    ///
    /// A provider's `Retry-After` wins (capped at
    /// [`RetryPolicy::max_retry_after`]); otherwise exponential backoff with
    /// "equal jitter": half the step is fixed, half random, so clients that
    /// failed together do not come back together.
    pub fn delay_after(&self, failed_attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_retry_after);
        }
        let doublings = failed_attempt.saturating_sub(1).min(16);
        let step = self
            .base_delay
            .saturating_mul(1u32 << doublings)
            .min(self.max_delay);
        let half = step / 2;
        let jitter = rand::rng().random_range(0.0..=1.0);
        half + half.mul_f64(jitter)
    }
}

/// One failed attempt of a model request that is tried again: what the
/// session file shows of a retry.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryNotice {
    /// The attempt that failed (1-based).
    pub attempt: u32,
    /// Attempts allowed in all, the first one included.
    pub max_attempts: u32,
    /// The wait before the next attempt.
    pub delay: Duration,
    /// What failed, as the provider error reads (API key scrubbed).
    pub error: String,
}

impl std::fmt::Display for RetryNotice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "attempt {} of {} failed: {}; retrying in {:.1} s",
            self.attempt,
            self.max_attempts,
            self.error,
            self.delay.as_secs_f64()
        )
    }
}

/// A provider's retry policy and the retries it made that the agent loop
/// has not collected yet ([`crate::provider::Provider::take_retries`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Retries {
    /// When and how long to retry.
    pub policy: RetryPolicy,
    made: Vec<RetryNotice>,
}

impl Retries {
    /// No retries made yet, under `policy`.
    pub(crate) fn new(policy: RetryPolicy) -> Self {
        Self {
            policy,
            made: Vec::new(),
        }
    }

    /// Remembers a retry about to be made.
    pub(crate) fn record(&mut self, notice: RetryNotice) {
        self.made.push(notice);
    }

    /// The retries made since the last call, oldest first.
    pub(crate) fn take(&mut self) -> Vec<RetryNotice> {
        std::mem::take(&mut self.made)
    }
}

/// Parses a `Retry-After` header value: delay seconds (`120`) or an HTTP-date
/// (`Wed, 21 Oct 2015 07:28:00 GMT`, or the obsolete RFC 850 and asctime
/// forms, which RFC 9110 section 5.6.7 says recipients must still accept),
/// relative to `now`. A date in the past means "now" (zero). `None` when the
/// value is neither.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    // Some servers send fractional seconds; harmless to accept.
    if let Ok(secs) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses the OpenAI `retry-after-ms` header (milliseconds).
pub fn parse_retry_after_ms(value: &str) -> Option<Duration> {
    let ms = value.trim().parse::<f64>().ok()?;
    Duration::try_from_secs_f64(ms / 1000.0).ok()
}

#[cfg(test)]
#[path = "retry_tests.rs"]
mod tests;
