use std::time::{Duration, UNIX_EPOCH};

use pretty_assertions::assert_eq;

use super::*;

/// 1994-11-06 08:49:37 UTC, the date of RFC 9110's example.
const RFC_EXAMPLE_UNIX_SECS: u64 = 784_111_777;

#[test]
fn retry_after_seconds_are_taken_as_given() {
    assert_eq!(
        parse_retry_after("120", SystemTime::now()),
        Some(Duration::from_secs(120))
    );
    assert_eq!(
        parse_retry_after(" 1.5 ", SystemTime::now()),
        Some(Duration::from_millis(1500))
    );
}

#[test]
fn retry_after_http_date_is_relative_to_now() {
    let now = UNIX_EPOCH + Duration::from_secs(RFC_EXAMPLE_UNIX_SECS - 30);
    assert_eq!(
        parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
        Some(Duration::from_secs(30))
    );
}

#[test]
fn retry_after_obsolete_date_forms_are_accepted() {
    let now = UNIX_EPOCH + Duration::from_secs(RFC_EXAMPLE_UNIX_SECS - 30);
    for value in ["Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
        assert_eq!(
            parse_retry_after(value, now),
            Some(Duration::from_secs(30)),
            "{value:?}"
        );
    }
}

#[test]
fn retry_after_date_in_the_past_means_now() {
    let now = UNIX_EPOCH + Duration::from_secs(RFC_EXAMPLE_UNIX_SECS + 600);
    assert_eq!(
        parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
        Some(Duration::ZERO)
    );
}

#[test]
fn leap_year_dates_convert_exactly() {
    // 2024-02-29 12:00:00 UTC.
    let now = UNIX_EPOCH + Duration::from_secs(1_709_208_000);
    assert_eq!(
        parse_retry_after("Thu, 29 Feb 2024 12:00:05 GMT", now),
        Some(Duration::from_secs(5))
    );
}

#[test]
fn garbage_retry_after_is_ignored() {
    for value in [
        "",
        "soon",
        "-5",
        "Sun, 06 Nov 1994 08:49:37 PST",
        "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 25:49:37 GMT",
    ] {
        assert_eq!(
            parse_retry_after(value, SystemTime::now()),
            None,
            "{value:?}"
        );
    }
}

#[test]
fn retry_after_ms_header_is_milliseconds() {
    assert_eq!(
        parse_retry_after_ms("250"),
        Some(Duration::from_millis(250))
    );
    assert_eq!(parse_retry_after_ms("x"), None);
}

#[test]
fn provider_retry_after_wins_but_is_capped() {
    let policy = RetryPolicy::default();
    assert_eq!(
        policy.delay_after(1, Some(Duration::from_secs(3))),
        Duration::from_secs(3)
    );
    assert_eq!(
        policy.delay_after(1, Some(Duration::from_secs(3600))),
        DEFAULT_MAX_RETRY_AFTER
    );
}

#[test]
fn backoff_doubles_with_jitter_within_half_and_full_step() {
    let policy = RetryPolicy {
        base_delay: Duration::from_millis(100),
        max_delay: Duration::from_millis(350),
        ..RetryPolicy::default()
    };
    for _ in 0..50 {
        let first = policy.delay_after(1, None);
        assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
        let second = policy.delay_after(2, None);
        assert!(second >= Duration::from_millis(100) && second <= Duration::from_millis(200));
        let capped = policy.delay_after(10, None);
        assert!(capped >= Duration::from_millis(175) && capped <= Duration::from_millis(350));
    }
}

#[test]
fn huge_attempt_numbers_do_not_overflow() {
    let policy = RetryPolicy::default();
    assert!(policy.delay_after(u32::MAX, None) <= DEFAULT_MAX_DELAY);
}

#[test]
fn retries_are_kept_until_taken_and_read_as_one_line() {
    let mut retries = Retries::new(RetryPolicy::default());
    retries.record(RetryNotice {
        attempt: 1,
        max_attempts: 3,
        delay: Duration::from_millis(2_000),
        error: "provider returned HTTP 429 (rate_limit_error): slow down".into(),
    });
    let taken = retries.take();
    assert_eq!(
        taken.iter().map(ToString::to_string).collect::<Vec<_>>(),
        [
            "attempt 1 of 3 failed: provider returned HTTP 429 (rate_limit_error): slow down; \
          retrying in 2.0 s"
        ]
    );
    assert_eq!(retries.take(), Vec::new(), "taken once");
}
