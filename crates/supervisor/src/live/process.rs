//! Which process a pid names now: its start time in `/proc/<pid>/stat`
//! (clock ticks after boot), which a recycled pid does not share.
//!
//! Reads `/proc` only; a missing entry is a process that is gone.

/// The start time of process `pid`, `None` when there is no such process
/// (or `/proc` cannot say).
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    start_time_of_stat(&stat)
}

/// This process's start time (0 when `/proc` cannot say: a reader then
/// finds no process with that start time, and lists none of its runs).
pub fn own_start_time() -> u64 {
    start_time(std::process::id()).unwrap_or(0)
}

/// Field 22 of a `stat` line. The command name (field 2) is in
/// parentheses and may hold spaces and parentheses itself, so fields are
/// counted after its last `)`.
pub fn start_time_of_stat(stat: &[u8]) -> Option<u64> {
    let after = stat.iter().rposition(|b| *b == b')')?;
    let rest = std::str::from_utf8(stat.get(after + 1..)?).ok()?;
    // Field 3 is the first after the name: the start time is 20 further.
    rest.split_ascii_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_time_is_read_after_a_name_with_spaces_and_parentheses() {
        let mut stat = b"42 (a) b) (c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 ".to_vec();
        stat.extend_from_slice(b"987654 1000 10 18446744073709551615\n");
        assert_eq!(start_time_of_stat(&stat), Some(987_654));
    }

    #[test]
    fn this_process_has_a_start_time_and_a_pid_that_cannot_exist_has_none() {
        assert!(own_start_time() > 0);
        assert_eq!(start_time(u32::MAX), None);
    }
}
