//! Workspace integration tests live in `tests/`. Its binary
//! `fixture-worker` speaks the real worker protocol and misbehaves on
//! request, so the supervisor's handling of hangs, floods, crashes, leaks
//! and protocol abuse is tested against real processes; `subagent-bench`
//! measures. This library holds the little the tests and the benchmarks
//! both need.

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
