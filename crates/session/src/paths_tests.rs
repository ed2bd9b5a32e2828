use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use super::*;

#[test]
fn session_file_is_dated_and_named_by_run_and_agent() {
    // 2026-11-22T12:00:00Z
    let t = UNIX_EPOCH + Duration::from_secs(1_795_348_800);
    let p = SessionPaths::new(Path::new("/s"), "abcd1234", "explorer", t);
    assert_eq!(
        p.session_file,
        Path::new("/s/2026/11/22/abcd1234-explorer.jsonl")
    );
    assert_eq!(
        p.full_output_file,
        Path::new("/s/2026/11/22/abcd1234-explorer.output.txt")
    );
}

#[test]
fn agent_names_cannot_escape_the_sessions_dir() {
    let p = SessionPaths::new(Path::new("/s"), "r", "../../etc/passwd", UNIX_EPOCH);
    assert_eq!(
        p.session_file,
        Path::new("/s/1970/01/01/r-______etc_passwd.jsonl")
    );
}
