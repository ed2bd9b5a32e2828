//! A test that needs what this machine lacks (root, a kernel feature, a
//! package that would not install): under CI it fails, because CI
//! machines have everything the tests need and CI must never pass by
//! skipping; elsewhere it prints one line saying what is missing and its
//! caller returns.

/// Whether this is a CI run (`CI` set, not empty, `false` or `0`).
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Says that `test` cannot run here because of `why`: fails under CI,
/// prints `skipping TEST: WHY` elsewhere (the caller then returns).
pub fn cannot_run(test: &str, why: &str) {
    assert!(!under_ci(), "{test}: {why}");
    eprintln!("skipping {test}: {why}");
}

/// What `probe` found when the machine has `feature`; when it does not,
/// [`cannot_run`] for the current test (named by its thread, which the
/// test harness names after it) and `None`.
pub fn needs<T>(feature: &str, probe: Result<T, String>) -> Option<T> {
    match probe {
        Ok(found) => Some(found),
        Err(reason) => {
            let thread = std::thread::current();
            let test = thread.name().unwrap_or("this test");
            cannot_run(test, &format!("it needs {feature}: {reason}"));
            None
        }
    }
}
