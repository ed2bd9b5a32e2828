//! Workspace integration tests live in `tests/`. Its binary
//! `fixture-worker` speaks the real worker protocol and misbehaves on
//! request, so the supervisor's handling of hangs, floods, crashes, leaks
//! and protocol abuse is tested against real processes; `subagent-bench`
//! measures; `subagent-under-test` and its two siblings are the suite's
//! copies of the product binaries (`subagent_test_support::bins`). This
//! library holds the little the tests and the benchmarks both need.

use std::path::Path;
use std::thread::JoinHandle;
use std::time::Duration;

/// A thread that reads the peak RSS (`VmHWM`, bytes) of `pid` every
/// millisecond until the process has exited (a zombie has none) and
/// returns the last peak read: the figure of a process that is not ours
/// to `wait4`, or whose `wait4` figure counts memory from before its exec.
pub fn sample_peak_rss(pid: u32) -> JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut peak = 0;
        while let Some(hwm) = subagent_sandbox::peak_rss_since_exec(pid) {
            peak = peak.max(hwm);
            std::thread::sleep(Duration::from_millis(1));
        }
        peak
    })
}

/// Made in its cwd by the fixture worker's `held-frames-N` mode once all
/// but a byte of its first frame is written (followed by its pid).
pub const HELD_FILE_PREFIX: &str = ".fixture-held-";

/// What the fixture worker's `held-frames-N` waits for in its cwd before
/// the last byte.
pub const RELEASE_FILE: &str = ".fixture-release";

/// What the fixture worker's `gated-frames-N` waits for in its cwd before
/// its frames.
pub const GO_FILE: &str = ".fixture-go";

/// Made in its cwd by the fixture worker's `cancel-ok` once its partial
/// answer is sent.
pub const CANCEL_AWAITED_FILE: &str = ".fixture-cancel-awaited";

/// How many `held-frames-N` workers working in `workspace` have all but
/// the last byte of their first frame sent (read by the supervisor, since a
/// socket buffer holds far less than a frame).
pub fn held_frames(workspace: &Path) -> std::io::Result<usize> {
    Ok(std::fs::read_dir(workspace)?
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(HELD_FILE_PREFIX)
        })
        .count())
}
