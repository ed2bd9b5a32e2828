//! Reading `/proc`: the process table (pid, parent, group, session, state,
//! start time) and which processes hold given pipes open.
//!
//! Read-only; a process vanishing mid-scan is normal and simply skipped.

use std::fs;

/// The kernel's per-task flag for "getting shut down" (include/linux/sched.h).
const PF_EXITING: u64 = 0x0000_0004;

/// The fields of `/proc/<pid>/stat` the leak hunt needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcStat {
    pub(crate) pid: u32,
    pub(crate) state: char,
    pub(crate) ppid: u32,
    pub(crate) pgid: i32,
    pub(crate) sid: i32,
    /// Clock ticks since boot at which the process started.
    pub(crate) start_ticks: u64,
    /// Already inside exit(2): it closes its files before it turns zombie,
    /// so a reader can see EOF from a process that still shows as running.
    pub(crate) exiting: bool,
}

impl ProcStat {
    /// A zombie has exited and only waits to be reaped.
    pub(crate) fn is_zombie(&self) -> bool {
        self.state == 'Z' || self.state == 'X'
    }

    /// Parses one `/proc/<pid>/stat` line. The command name may contain
    /// spaces and parentheses, so fields are counted from the last ')'.
    pub(crate) fn parse(text: &str) -> Option<ProcStat> {
        let (head, rest) = text.rsplit_once(')')?;
        let pid = head.split_once(" (")?.0.trim().parse().ok()?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        Some(ProcStat {
            pid,
            state: fields.first()?.chars().next()?,
            ppid: fields.get(1)?.parse().ok()?,
            pgid: fields.get(2)?.parse().ok()?,
            sid: fields.get(3)?.parse().ok()?,
            start_ticks: fields.get(19)?.parse().ok()?,
            exiting: fields.get(6)?.parse::<u64>().ok()? & PF_EXITING != 0,
        })
    }
}

/// One process's stat, or `None` once it is gone.
pub(crate) fn stat(pid: u32) -> Option<ProcStat> {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|t| ProcStat::parse(&t))
}

/// Peak resident set of `pid` since its last `exec`, bytes: `VmHWM` of
/// `/proc/<pid>/status`, which, unlike `wait4`'s figure, does not count the
/// memory the process had before its exec. `None` once the process has
/// exited (a zombie has no memory left to measure) or when unreadable.
pub fn peak_rss_since_exec(pid: u32) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()?;
    Some(kib.saturating_mul(1024))
}

/// Every process visible in `/proc`.
pub(crate) fn process_table() -> Vec<ProcStat> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(stat)
        .collect()
}

/// True when `pid` has the WRITE end of one of the pipes with these inodes
/// open. Both ends of a pipe share one inode; only writers keep a reader
/// from seeing EOF, and read-end copies turn up innocently (a sibling child
/// between fork and exec carries copies of our read ends).
pub(crate) fn holds_pipe_for_writing(pid: u32, inodes: &[u64]) -> bool {
    if inodes.is_empty() {
        return false;
    }
    let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.filter_map(Result::ok).any(|fd| {
        let on_our_pipe = fs::read_link(fd.path())
            .ok()
            .and_then(|target| pipe_inode(target.to_str()?))
            .is_some_and(|inode| inodes.contains(&inode));
        on_our_pipe
            && fs::read_to_string(format!(
                "/proc/{pid}/fdinfo/{}",
                fd.file_name().to_string_lossy()
            ))
            .ok()
            .and_then(|info| open_flags(&info))
            .is_some_and(|flags| flags & libc::O_ACCMODE != libc::O_RDONLY)
    })
}

/// The `flags:` field (octal) of a `/proc/<pid>/fdinfo/<fd>` text.
pub(crate) fn open_flags(fdinfo: &str) -> Option<i32> {
    fdinfo.lines().find_map(|line| {
        let value = line.strip_prefix("flags:")?.trim();
        i32::from_str_radix(value, 8).ok()
    })
}

/// The text of `/proc/<pid>/cgroup` (empty once the process is gone).
pub(crate) fn cgroups(pid: u32) -> String {
    fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default()
}

/// The inode of a `pipe:[12345]` fd link.
pub(crate) fn pipe_inode(link: &str) -> Option<u64> {
    link.strip_prefix("pipe:[")?.strip_suffix(']')?.parse().ok()
}

#[cfg(test)]
#[path = "procfs_tests.rs"]
mod tests;
