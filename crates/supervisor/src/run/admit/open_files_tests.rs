use super::*;

fn limit(soft: u64, hard: u64) -> OpenFilesLimit {
    OpenFilesLimit {
        soft,
        hard,
        raised_from: None,
    }
}

#[test]
fn what_fits_is_allowed_up_to_the_last_fd() {
    // 240 * (3 + 1 session file) + 64 = 1,024 exactly.
    assert_eq!(check_open_files(240, limit(1_024, 1_024)), Ok(()));
    assert_eq!(check_open_files(1, limit(68, 68)), Ok(()));
    // Past the held session files, 3 each: 300 * 3 + 256 + 64 = 1,220.
    assert_eq!(check_open_files(300, limit(1_220, 1_220)), Ok(()));
    assert!(check_open_files(300, limit(1_219, 1_219)).is_err());
}

#[test]
fn one_more_than_fits_is_refused_naming_the_limit_and_what_fits() {
    let err = check_open_files(241, limit(1_024, 4_096)).unwrap_err();
    assert_eq!((err.needed, err.fits), (1_028, 240));
    let text = err.to_string();
    for part in [
        "241 subagents at a time need about 1028 open files",
        "may open 1024 (hard limit 4096)",
        "Run at most 240 at a time",
        "ulimit -Hn",
    ] {
        assert!(text.contains(part), "{part:?} not in {text}");
    }
}

#[test]
fn a_raised_limit_says_what_it_was_raised_from() {
    let mut raised = limit(20_000, 20_000);
    raised.raised_from = Some(1_024);
    // 5,000 live fit in 20,000: 15,000 + 256 + 64.
    assert_eq!(check_open_files(5_000, raised), Ok(()));
    let err = check_open_files(6_600, raised).unwrap_err();
    assert_eq!(err.fits, 6_560);
    assert_eq!(check_open_files(err.fits, raised), Ok(()));
    assert!(
        err.to_string().contains("already raised from 1024"),
        "{err}"
    );
}

#[test]
fn a_limit_below_the_fixed_needs_fits_none_and_huge_counts_do_not_overflow() {
    assert_eq!(check_open_files(1, limit(10, 10)).unwrap_err().fits, 0);
    let err = check_open_files(u64::MAX, limit(1_024, 1_024)).unwrap_err();
    assert_eq!(err.needed, u64::MAX);
}

#[test]
fn what_fits_is_exactly_the_most_that_pass_the_check() {
    for soft in [0, 67, 68, 1_024, 1_087, 1_088, 1_089, 1_090, 4_096, 20_000] {
        let fits = live_subagents_that_fit(soft);
        assert!(
            fits == 0 || check_open_files(fits, limit(soft, soft)).is_ok(),
            "{soft}"
        );
        assert!(
            check_open_files(fits + 1, limit(soft, soft)).is_err(),
            "{soft}"
        );
    }
}
