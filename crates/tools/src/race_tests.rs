//! The file tools against a racing renamer (issue 18, attack 4): while a
//! thread swaps names between real files or directories inside and symlinks
//! to outside (`renameat2(RENAME_EXCHANGE)` and plain `rename`), `bash_read`,
//! `bash_find` and `bash_ripgrep` run again and again. Not one byte or name
//! from outside may appear in any result: with the first wall alone
//! (opening beneath the root's fd) and with both (plus the file tool
//! thread's Landlock).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rustix::fs::{CWD, RenameFlags};
use serde_json::json;

use crate::blocking::CancelFlag;
use crate::test_tree::{call, symlink, tree, write};
use crate::tool::{Tool, ToolContext, ToolError};
use crate::{BashFind, BashRead, BashRipgrep};

/// How long each race runs at most (two races; CI runs them on 2 cores).
const RACE_TIME: Duration = Duration::from_secs(12);
/// Tool calls after which a race stops early (about 4 s on an idle
/// 2-core machine).
const RACE_CALLS: u64 = 6_000;
/// In the outside file's contents and name: found in a result = an escape.
const OUTSIDE_MARK: &str = "OUTSIDE_SECRET";

fn exchange(a: &Path, b: &Path) {
    // A failure (a name briefly missing during a plain rename) is retried
    // on the next round.
    let _ = rustix::fs::renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE);
}

/// Swaps, until `stop`: `file` with `file_link` (a symlink to an outside
/// file) and `dir` with `dir_link` (a symlink to an outside directory) by
/// RENAME_EXCHANGE, and `file` through a plain rename cycle.
fn race(root: &Path, stop: &AtomicBool, swaps: &AtomicU64) {
    let (file, file_link) = (root.join("file.txt"), root.join("file_link"));
    let (dir, dir_link) = (root.join("dir"), root.join("dir_link"));
    let parked = root.join("parked");
    while !stop.load(Ordering::Relaxed) {
        exchange(&file, &file_link);
        exchange(&dir, &dir_link);
        exchange(&file, &file_link);
        exchange(&dir, &dir_link);
        // rename(2) replacing a name: the symlink takes `file.txt`'s place.
        let _ = std::fs::rename(&file, &parked);
        let _ = std::fs::rename(&file_link, &file);
        let _ = std::fs::rename(&file, &file_link);
        let _ = std::fs::rename(&parked, &file);
        swaps.fetch_add(6, Ordering::Relaxed);
    }
}

/// A workspace holding a real file and directory beside symlinks to an
/// outside file and directory, and the outside tree (kept alive with it).
fn race_course() -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = tree(&[
        ("file.txt", "inside text\n"),
        ("dir/inner.txt", "inside text\n"),
        ("dir/nested/deep.txt", "inside text\n"),
        ("other.txt", "inside text\n"),
    ]);
    let outside = tree(&[]);
    let marked = format!("{OUTSIDE_MARK}\n");
    write(outside.path(), "outside.txt", marked.as_bytes());
    write(
        outside.path(),
        &format!("sub/{OUTSIDE_MARK}.txt"),
        marked.as_bytes(),
    );
    write(
        outside.path(),
        &format!("sub/nested/{OUTSIDE_MARK}.txt"),
        marked.as_bytes(),
    );
    symlink(&outside.path().join("outside.txt"), dir.path(), "file_link");
    symlink(&outside.path().join("sub"), dir.path(), "dir_link");
    (dir, outside)
}

/// The calls each round makes: (tool, arguments).
fn race_calls() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("bash_read", json!({"path": "file.txt"})),
        ("bash_read", json!({"path": "dir/inner.txt"})),
        ("bash_read", json!({"path": "dir"})),
        ("bash_find", json!({"pattern": "*"})),
        ("bash_find", json!({"pattern": "*", "path": "dir"})),
        ("bash_ripgrep", json!({"pattern": "text|SECRET"})),
        (
            "bash_ripgrep",
            json!({"pattern": "text|SECRET", "path": "dir"}),
        ),
    ]
}

/// What a race found.
struct Tally {
    made: u64,
    refused: u64,
    escapes: Vec<String>,
}

impl Tally {
    fn record(
        &mut self,
        tool: &str,
        arguments: &serde_json::Value,
        result: Result<String, ToolError>,
    ) {
        self.made += 1;
        let text = result.unwrap_or_else(|e| {
            self.refused += 1;
            e.to_string()
        });
        if text.contains(OUTSIDE_MARK) {
            self.escapes.push(format!("{tool} {arguments}: {text}"));
        }
    }

    fn assert_no_escape(&self, swaps: u64, wall: &str, started: Instant) {
        eprintln!(
            "race ({wall}): {} calls ({} refused as changed or outside) against {swaps} swaps in {:.1} s",
            self.made,
            self.refused,
            started.elapsed().as_secs_f64()
        );
        assert!(
            self.escapes.is_empty(),
            "{} of {} calls returned outside data, e.g. {}",
            self.escapes.len(),
            self.made,
            self.escapes[0]
        );
        assert!(
            self.made >= 1_000,
            "only {} calls: the race proves little",
            self.made
        );
        assert!(swaps >= 1_000, "only {swaps} swaps: the race proves little");
    }
}

/// Races `call` (tool, arguments) against the renamer in `dir`.
async fn race_against<F, Fut>(dir: &Path, wall: &str, mut call: F)
where
    F: FnMut(&'static str, serde_json::Value) -> Fut,
    Fut: std::future::Future<Output = Result<String, ToolError>>,
{
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let racer = {
        let (root, stop, swaps) = (dir.to_path_buf(), stop.clone(), swaps.clone());
        std::thread::spawn(move || race(&root, &stop, &swaps))
    };
    let calls = race_calls();
    let started = Instant::now();
    let mut tally = Tally {
        made: 0,
        refused: 0,
        escapes: Vec::new(),
    };
    while started.elapsed() < RACE_TIME && tally.made < RACE_CALLS {
        for (tool, arguments) in &calls {
            let result = call(tool, arguments.clone()).await;
            tally.record(tool, arguments, result);
        }
    }
    stop.store(true, Ordering::Relaxed);
    racer.join().unwrap();
    tally.assert_no_escape(swaps.load(Ordering::Relaxed), wall, started);
}

/// The first wall alone (opening beneath the root fd, checking the fd):
/// the tools' work run on this test's own thread, with no Landlock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_beneath_the_root_alone_lets_no_outside_byte_through_a_race() {
    let (dir, _outside) = race_course();
    let root = dir.path().to_path_buf();
    race_against(dir.path(), "beneath, no Landlock", |tool, arguments| {
        let root = root.clone();
        async move { unconfined(&root, tool, arguments) }
    })
    .await;
}

/// Both walls, through the tools as the worker calls them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_outside_byte_reaches_a_file_tool_while_names_are_swapped_for_symlinks_out() {
    let (dir, _outside) = race_course();
    let root = dir.path().to_path_buf();
    race_against(dir.path(), "beneath and Landlock", |tool, arguments| {
        let root = root.clone();
        async move {
            let tool: &dyn Tool = match tool {
                "bash_read" => &BashRead,
                "bash_find" => &BashFind,
                _ => &BashRipgrep,
            };
            call(tool, &root, arguments).await
        }
    })
    .await;
}

/// A tool's work without its thread's Landlock.
fn unconfined(root: &Path, tool: &str, arguments: serde_json::Value) -> Result<String, ToolError> {
    let cancel = CancelFlag::default();
    let parse = |e: serde_json::Error| ToolError::InvalidArguments(e.to_string());
    match tool {
        "bash_read" => crate::read::read(
            root,
            &serde_json::from_value(arguments).map_err(parse)?,
            ToolContext::new(root).output_caps,
            &cancel,
        ),
        "bash_find" => crate::find::find(
            root,
            &serde_json::from_value(arguments).map_err(parse)?,
            &cancel,
        ),
        _ => crate::ripgrep::search(
            root,
            &serde_json::from_value(arguments).map_err(parse)?,
            &cancel,
        ),
    }
}
