use pretty_assertions::assert_eq;

use super::*;

#[test]
fn sizes_read_binary_units_with_optional_b_or_ib() {
    for (text, bytes) in [
        ("512M", 512 * MIB),
        ("2G", 2 * GIB),
        ("2GiB", 2 * GIB),
        ("2gb", 2 * GIB),
        ("100K", 100 * KIB),
        ("100kib", 100 * KIB),
        ("8MB", 8 * MIB),
        ("4096", 4096),
        ("4096B", 4096),
        (" 1G ", GIB),
    ] {
        assert_eq!(parse_size(text), Ok(ByteSize(bytes)), "{text}");
    }
}

#[test]
fn a_bad_size_says_what_is_accepted() {
    for text in ["12X", "", "M", "1.5G", "-1M", "2T", "1 G"] {
        assert_eq!(
            parse_size(text),
            Err(format!(
                "`{text}` is not a size; use a number with K, M or G (e.g. 512M, 2G)"
            )),
            "{text}"
        );
    }
}

#[test]
fn a_zero_or_overflowing_size_is_refused() {
    assert_eq!(
        parse_size("0M"),
        Err("`0M` is zero; a limit must be at least 1 byte".to_owned())
    );
    assert_eq!(
        parse_size("99999999999999G"),
        Err("`99999999999999G` is too large".to_owned())
    );
}

#[test]
fn durations_read_humantime_units_and_plain_seconds() {
    for (text, ms) in [
        ("90s", 90_000),
        ("15m", 900_000),
        ("1h", 3_600_000),
        ("1h30m", 5_400_000),
        ("1h 30m", 5_400_000),
        ("500ms", 500),
        ("2min", 120_000),
        ("900", 900_000),
        ("90", 90_000),
    ] {
        assert_eq!(parse_duration(text), Ok(Timespan { ms }), "{text}");
    }
}

#[test]
fn a_bad_duration_says_what_is_accepted() {
    for text in ["soon", "", "15x", "1.5h", "m", "-5s", "10s5"] {
        assert_eq!(
            parse_duration(text),
            Err(format!(
                "`{text}` is not a duration; use seconds or a number with ms, s, m or h (e.g. 90s, 15m, 1h)"
            )),
            "{text}"
        );
    }
}

#[test]
fn a_zero_or_overflowing_duration_is_refused() {
    assert_eq!(
        parse_duration("0s"),
        Err("`0s` is zero; a timeout must be longer".to_owned())
    );
    assert_eq!(
        parse_duration("0"),
        Err("`0` is zero; a timeout must be longer".to_owned())
    );
    assert_eq!(
        parse_duration("99999999999999999"),
        Err("`99999999999999999` is too long".to_owned())
    );
}

#[test]
fn defaults_print_as_a_user_would_type_them_and_parse_back() {
    let limits = subagent_protocol::Limits::default();
    assert_eq!(ByteSize(limits.memory_bytes).to_string(), "2G");
    assert_eq!(ByteSize(limits.returned_text_bytes).to_string(), "200K");
    assert_eq!(ByteSize(1000).to_string(), "1000");
    assert_eq!(
        Timespan {
            ms: limits.wall_timeout_ms
        }
        .to_string(),
        "15m"
    );
    assert_eq!(Timespan { ms: 90_000 }.to_string(), "90s");
    assert_eq!(Timespan { ms: 3_600_000 }.to_string(), "1h");
    assert_eq!(Timespan { ms: 1_500 }.to_string(), "1500ms");
    for size in [
        limits.memory_bytes,
        limits.stdout_bytes,
        limits.stderr_bytes,
        limits.returned_text_bytes,
        limits.tool_memory_bytes,
        1000,
    ] {
        assert_eq!(parse_size(&ByteSize(size).to_string()), Ok(ByteSize(size)));
    }
    for ms in [
        limits.wall_timeout_ms,
        limits.idle_timeout_ms,
        limits.tool_timeout_ms,
        1_500,
    ] {
        let span = Timespan { ms };
        assert_eq!(parse_duration(&span.to_string()), Ok(span));
    }
}

#[test]
fn durations_read_days_too() {
    assert_eq!(parse_duration("3d"), Ok(Timespan { ms: 3 * DAY_MS }));
    assert_eq!(parse_duration("1d12h"), Ok(Timespan { ms: 36 * HOUR_MS }));
    assert_eq!(parse_duration("2days"), Ok(Timespan { ms: 2 * DAY_MS }));
}

// The cases of the parser `sessions --since` / `--older-than` had in
// session/read.rs before it moved here.
#[test]
fn ages_take_a_unit() {
    assert_eq!(parse_age("90s"), Ok(Duration::from_secs(90)));
    assert_eq!(parse_age("15m"), Ok(Duration::from_secs(900)));
    assert_eq!(parse_age("2h"), Ok(Duration::from_secs(7_200)));
    assert_eq!(parse_age("3d"), Ok(Duration::from_secs(259_200)));
    for bad in ["", "2", "h", "2w", "-1d", "1.5h"] {
        assert!(parse_age(bad).is_err(), "{bad}");
    }
}

#[test]
fn ages_read_the_same_pieces_as_durations_and_allow_zero() {
    assert_eq!(parse_age("1h30m"), Ok(Duration::from_secs(5_400)));
    assert_eq!(parse_age(" 1d 12h "), Ok(Duration::from_secs(129_600)));
    assert_eq!(parse_age("0s"), Ok(Duration::ZERO));
    assert_eq!(
        parse_age("2w"),
        Err(
            "`2w` is not an age; use a number with s, m, h or d (e.g. 90s, 15m, 2h, 3d)".to_owned()
        )
    );
    assert_eq!(
        parse_age("99999999999999999d"),
        Err("`99999999999999999d` is too long".to_owned())
    );
}
