use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::live::LiveRun;
use crate::live::record::tests_support::record;

fn live_dir(dir: &Path) -> PathBuf {
    let live = dir.join(LIVE_DIR);
    std::fs::create_dir_all(&live).unwrap();
    live
}

#[test]
fn no_live_dir_lists_nothing_and_a_link_in_its_place_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let listing = list_live(dir.path(), Duration::from_secs(1)).unwrap();
    assert_eq!(listing, LiveListing::default());
    std::os::unix::fs::symlink("/tmp", dir.path().join(LIVE_DIR)).unwrap();
    let err = list_live(dir.path(), Duration::from_secs(1)).unwrap_err();
    assert!(err.to_string().contains("remove it"), "{err}");
}

#[test]
fn planted_files_are_not_listed_and_unlocked_ones_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let live = live_dir(dir.path());
    let key = session_key().unwrap();
    // A record sealed right, naming this process, but nobody holds its
    // lock: a dead run's (or a copy of a live one's) -- removed.
    let mut copied = record();
    copied.supervisor_pid = std::process::id() + 1;
    std::fs::write(live.join(&copied.run_id), copied.seal(key)).unwrap();
    // Garbage, a FIFO, a huge file: none is a run.
    std::fs::write(live.join("garbage"), b"{\"not\":1}\n").unwrap();
    nix::unistd::mkfifo(
        &live.join("fifo"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    let big = std::fs::File::create(live.join("big")).unwrap();
    big.set_len(1 << 30).unwrap();
    std::fs::set_permissions(live.join("big"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let listing = list_live(dir.path(), Duration::from_secs(1)).unwrap();
    assert!(listing.runs.is_empty(), "{listing:?}");
    assert!(!live.join(&copied.run_id).exists(), "the dead record stays");
}

#[test]
fn a_run_of_this_process_is_listed_with_its_durations() {
    let dir = tempfile::tempdir().unwrap();
    let id = crate::session::run_ids::new_run_id();
    let run = LiveRun::begin(
        dir.path(),
        &id,
        "general",
        "m",
        Some(Path::new("/x/0190abcd-general.jsonl")),
    );
    let listing = list_live(dir.path(), Duration::ZERO).unwrap();
    let [entry] = listing.runs.as_slice() else {
        panic!("{listing:?}");
    };
    assert_eq!(entry.run_id, id);
    assert_eq!(entry.parent_run_id.as_deref(), Some("0190abcd"));
    assert_eq!(entry.supervisor_pid, std::process::id());
    drop(run);
}

#[test]
fn a_parent_file_that_is_no_runs_names_no_parent() {
    let dir = tempfile::tempdir().unwrap();
    let id = crate::session::run_ids::new_run_id();
    let run = LiveRun::begin(
        dir.path(),
        &id,
        "general",
        "m",
        Some(Path::new("/x/serve-1234.jsonl")),
    );
    let listing = list_live(dir.path(), Duration::ZERO).unwrap();
    assert_eq!(listing.runs[0].parent_run_id, None);
    drop(run);
}
