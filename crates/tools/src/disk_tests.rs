use std::io::Write;

use nix::fcntl::openat;
use pretty_assertions::assert_eq;

use super::*;

const MIB: u64 = 1024 * 1024;

/// Writes `bytes` of real data (not a hole) to `path`, synced so the
/// blocks are allocated when measured.
fn write_file(path: &Path, bytes: u64) {
    let mut file = std::fs::File::create(path).unwrap();
    let chunk = vec![0x5au8; 64 * 1024];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        file.write_all(&chunk[..n]).unwrap();
        left -= n as u64;
    }
    file.sync_all().unwrap();
}

fn grown(dir: &Path, before: DiskUsage) -> u64 {
    measure(dir).unwrap().bytes - before.bytes
}

#[test]
fn written_bytes_count_in_nested_directories() {
    let dir = tempfile::tempdir().unwrap();
    let before = measure(dir.path()).unwrap();
    std::fs::create_dir_all(dir.path().join("a/b/c")).unwrap();
    write_file(&dir.path().join("a/b/c/data"), 3 * MIB);
    write_file(&dir.path().join("top"), MIB);
    let grown = grown(dir.path(), before);
    assert!((4 * MIB..5 * MIB).contains(&grown), "grew {grown}");
}

#[test]
fn a_sparse_file_counts_what_it_holds_not_its_length() {
    let dir = tempfile::tempdir().unwrap();
    let before = measure(dir.path()).unwrap();
    let file = std::fs::File::create(dir.path().join("sparse")).unwrap();
    file.set_len(10 * 1024 * MIB).unwrap();
    assert!(grown(dir.path(), before) < MIB);
}

#[test]
fn hard_links_count_once_and_symlinks_are_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write_file(&outside.path().join("big"), 4 * MIB);
    let before = measure(dir.path()).unwrap();
    write_file(&dir.path().join("data"), 2 * MIB);
    for i in 0..5 {
        std::fs::hard_link(dir.path().join("data"), dir.path().join(format!("link{i}"))).unwrap();
    }
    std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("big"), dir.path().join("big")).unwrap();
    let grown = grown(dir.path(), before);
    assert!((2 * MIB..3 * MIB).contains(&grown), "grew {grown}");
}

#[test]
fn a_tree_deeper_than_path_max_is_walked() {
    let dir = tempfile::tempdir().unwrap();
    let before = measure(dir.path()).unwrap();
    // 300 levels of 40-character names: 12,000 bytes of path, past PATH_MAX.
    let name = "d".repeat(40);
    let mut fd = open(dir.path(), DIR_FLAGS, Mode::empty()).unwrap();
    for _ in 0..300 {
        nix::sys::stat::mkdirat(&fd, name.as_str(), Mode::from_bits_truncate(0o700)).unwrap();
        fd = openat(&fd, name.as_str(), DIR_FLAGS, Mode::empty()).unwrap();
    }
    let file = openat(
        &fd,
        "deep",
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    let mut file = std::fs::File::from(file);
    file.write_all(&vec![1u8; 2 * MIB as usize]).unwrap();
    file.sync_all().unwrap();
    let usage = measure(dir.path()).unwrap();
    assert_eq!(usage.unreadable_dirs, 0);
    assert!(usage.bytes - before.bytes >= 2 * MIB, "{usage:?}");
}

#[test]
fn growth_past_the_cap_or_a_hidden_directory_is_a_breach() {
    let start = CallStart {
        baseline: DiskUsage {
            bytes: 100,
            unreadable_dirs: 1,
        },
        now: DiskUsage {
            bytes: 150,
            unreadable_dirs: 1,
        },
        cap: 1_000,
    };
    assert_eq!(start.grown(), 50);
    assert_eq!(start.remaining(), 950);
    let at = |bytes, unreadable_dirs| DiskUsage {
        bytes,
        unreadable_dirs,
    };
    assert_eq!(breach(&start, &at(1_100, 1)), None, "exactly the cap");
    assert_eq!(breach(&start, &at(1_101, 1)), Some(Breach::Grew(1_001)));
    assert_eq!(breach(&start, &at(50, 1)), None, "shrunk");
    assert_eq!(breach(&start, &at(200, 3)), Some(Breach::Hidden(2)));
}

#[tokio::test]
async fn the_baseline_is_the_first_call_and_later_calls_see_what_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let growth = WorkspaceGrowth::new(8 * MIB);
    let first = growth.start_call(dir.path()).await.unwrap();
    assert_eq!(first.grown(), 0);
    write_file(&dir.path().join("data"), 3 * MIB);
    let second = growth.clone().start_call(dir.path()).await.unwrap();
    assert_eq!(second.baseline, first.baseline);
    assert!((3 * MIB..4 * MIB).contains(&second.grown()), "{second:?}");
    assert!(second.remaining() <= 5 * MIB);
}

#[tokio::test]
async fn the_watch_returns_once_the_workspace_passes_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let growth = WorkspaceGrowth::new(2 * MIB);
    let start = growth.start_call(dir.path()).await.unwrap();
    let watching = tokio::spawn(watch(dir.path().to_owned(), start));
    write_file(&dir.path().join("one"), MIB);
    // Under the cap: the watch goes on (checked after its next walk).
    tokio::time::sleep(WATCH_INTERVAL * 3).await;
    assert!(!watching.is_finished());
    write_file(&dir.path().join("two"), 2 * MIB);
    let breach = tokio::time::timeout(Duration::from_secs(10), watching)
        .await
        .expect("the watch saw the growth")
        .unwrap();
    assert!(
        matches!(breach, Breach::Grew(b) if b > 2 * MIB),
        "{breach:?}"
    );
}
