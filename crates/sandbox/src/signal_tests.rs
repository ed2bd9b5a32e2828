use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command};

use super::*;

/// A `sleep` child of this test and its start time.
fn sleeper() -> (Child, u32, u64) {
    let child = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = child.id();
    let start = procfs::stat(pid).unwrap().start_ticks;
    (child, pid, start)
}

/// Reaps `child` and returns the signal that ended it. The spared signal
/// (SIGTERM) goes first and the meant one (SIGKILL) second, so a SIGTERM
/// death shows the spared one got through: a fatal signal settles the exit
/// status when it is sent.
fn death_signal(mut child: Child) -> Option<i32> {
    child.wait().unwrap().signal()
}

#[test]
fn start_times_tell_the_same_process_from_a_reused_pid() {
    assert_eq!(identify(500, Some(500)), Identity::Same);
    assert_eq!(identify(500, Some(501)), Identity::Reused);
    assert_eq!(identify(500, None), Identity::Gone);
    assert_eq!(membership(7, &[3, 7]), Identity::Same);
    assert_eq!(membership(7, &[3]), Identity::Gone);
}

#[test]
fn a_pid_that_names_another_process_now_is_not_signalled() {
    let (child, pid, start) = sleeper();
    // As the leak hunt would see it had the process it found died and the
    // pid gone to this sleep: a different start time.
    assert_eq!(
        signal_if_same(pid, start + 1, libc::SIGTERM),
        Delivery::Spared
    );
    assert_eq!(signal_if_same(pid, start, libc::SIGKILL), Delivery::Sent);
    assert_eq!(death_signal(child), Some(libc::SIGKILL));
}

#[test]
fn without_pidfds_the_bare_pid_is_checked_all_the_same() {
    let (child, pid, start) = sleeper();
    let stranger = || identify(start + 1, procfs::stat(pid).map(|s| s.start_ticks));
    assert_eq!(
        deliver(&Handle::Pid(pid), stranger, libc::SIGTERM),
        Delivery::Spared
    );
    let meant = || identify(start, procfs::stat(pid).map(|s| s.start_ticks));
    assert_eq!(
        deliver(&Handle::Pid(pid), meant, libc::SIGKILL),
        Delivery::Sent
    );
    assert_eq!(death_signal(child), Some(libc::SIGKILL));
}

#[test]
fn a_member_the_cgroup_no_longer_lists_is_not_signalled() {
    let (child, pid, _) = sleeper();
    // Listed once, gone from the second reading: its pid may be anyone's.
    assert!(signal_listed(&[pid], Vec::new, libc::SIGTERM).is_empty());
    assert_eq!(
        signal_listed(&[pid], || vec![pid], libc::SIGKILL),
        vec![pid]
    );
    assert_eq!(death_signal(child), Some(libc::SIGKILL));
}

/// The running kernel's (major, minor) version.
fn kernel_version() -> (u32, u32) {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let mut numbers = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|n| n.parse().unwrap_or(0));
    (numbers.next().unwrap(), numbers.next().unwrap())
}

#[test]
fn pidfds_are_used_where_the_kernel_has_them() {
    let (mut child, pid, _) = sleeper();
    let handle = Handle::take(pid);
    if kernel_version() >= (5, 3) {
        assert!(matches!(handle, Handle::PidFd(_)), "{handle:?}");
    } else {
        assert!(matches!(handle, Handle::Pid(p) if p == pid), "{handle:?}");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // Reaped: the pid is free for anyone, the pidfd still names the dead
    // process, and a signal through it reaches nobody.
    assert_eq!(
        deliver(&handle, || Identity::Same, libc::SIGKILL),
        Delivery::Sent
    );
}
