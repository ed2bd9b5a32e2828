use super::*;

#[test]
fn stat_line_with_odd_command_name_parses() {
    let line = "4242 (my (odd) cmd) S 17 4242 17 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615";
    let got = ProcStat::parse(line).unwrap();
    assert_eq!(
        got,
        ProcStat {
            pid: 4242,
            state: 'S',
            ppid: 17,
            pgid: 4242,
            sid: 17,
            start_ticks: 987654,
            exiting: false,
        }
    );
    assert!(!got.is_zombie());
    let dying = line.replace(" 4194560 ", " 4194564 ");
    assert!(ProcStat::parse(&dying).unwrap().exiting);
}

#[test]
fn truncated_stat_line_is_rejected() {
    assert_eq!(ProcStat::parse("12 (sh) Z 1 12"), None);
}

#[test]
fn own_process_is_in_the_table() {
    let me = std::process::id();
    let table = process_table();
    let own = table.iter().find(|p| p.pid == me).unwrap();
    assert!(!own.is_zombie());
}

#[test]
fn pipe_links_yield_their_inode() {
    assert_eq!(pipe_inode("pipe:[15763]"), Some(15763));
    assert_eq!(pipe_inode("socket:[15763]"), None);
    assert_eq!(pipe_inode("/dev/null"), None);
}

#[test]
fn fdinfo_flags_are_read_as_octal() {
    let info = "pos:\t0\nflags:\t0100001\nmnt_id:\t15\n";
    let flags = open_flags(info).unwrap();
    assert_eq!(flags & libc::O_ACCMODE, libc::O_WRONLY);
    assert_eq!(open_flags("pos:\t0\n"), None);
}

#[test]
fn only_the_write_end_of_a_pipe_counts_as_holding_it() {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    let mut fds = [0; 2];
    // SAFETY: pipe(2) writes two fds into the array.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both fds were just created and are owned here only.
    let (read, write) = unsafe {
        use std::os::fd::FromRawFd;
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    };
    let inode = read.metadata().unwrap().ino();
    let me = std::process::id();
    assert!(holds_pipe_for_writing(me, &[inode]));
    assert!(write.as_raw_fd() > 0);
    drop(write);
    assert!(
        !holds_pipe_for_writing(me, &[inode]),
        "the read end alone is not a writer"
    );
    drop(read);
}
