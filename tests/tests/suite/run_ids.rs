//! Run ids as an operator meets them: 128-bit ids in the session file
//! names, `sessions ls` showing each by its shortest unique prefix (at
//! least 8 digits), and every such prefix naming its run in `sessions show`;
//! a prefix two runs share is refused as ambiguous, and a file of the older
//! 8-digit ids is still found by its id.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::sessions_cmd::sessions;
use super::support::*;

/// A run of the fixture worker; its run id and session file.
fn run(dir: &Path) -> (String, PathBuf) {
    let out = fixture_cli(dir)
        .args(["--task", "Name a prime", "--json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_children_reaped(&json);
    let id = json["details"]["runId"].as_str().unwrap().to_owned();
    (id, session_file_of(&json))
}

/// The RUN ID column of `sessions ls` (after the two words of START).
fn shown_ids(dir: &Path) -> Vec<String> {
    let out = sessions(dir, &["ls"]);
    assert_exit(&out, 0);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        .map(|row| row.split_whitespace().nth(2).unwrap().to_owned())
        .collect()
}

#[test]
fn ids_are_shown_and_found_by_their_shortest_unique_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let runs = [run(dir.path()), run(dir.path()), run(dir.path())];
    for (id, file) in &runs {
        assert_eq!(id.len(), 32, "{id}");
        assert!(
            file.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("{id}-")),
            "{}",
            file.display()
        );
    }
    let shown = shown_ids(dir.path());
    assert_eq!(shown.len(), runs.len(), "{shown:?}");
    for short in &shown {
        assert!(short.len() >= 8, "{short}");
        let named: Vec<&(String, PathBuf)> = runs
            .iter()
            .filter(|(id, _)| id.starts_with(short))
            .collect();
        assert_eq!(named.len(), 1, "{short} names {named:?}");
        // Not longer than needed: one digit less names another run too,
        // or is under 8.
        let shorter = &short[..short.len() - 1];
        assert!(
            shorter.len() < 8
                || runs
                    .iter()
                    .filter(|(id, _)| id.starts_with(shorter))
                    .count()
                    > 1,
            "{short} is longer than it must be"
        );
        let out = sessions(dir.path(), &["show", short]);
        assert_exit(&out, 0);
        let first = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            first.lines().next().unwrap(),
            named[0].1.display().to_string()
        );
    }
    // Runs of one minute share their first 8 digits (the time): such a
    // prefix is refused with what to do, never taken for one of them.
    let (a, b) = (&runs[0].0, &runs[1].0);
    if a[..8] == b[..8] {
        let out = sessions(dir.path(), &["show", &a[..8]]);
        assert_exit_saying(&out, 2, "is ambiguous (give more of its digits)");
    }
}

#[test]
fn a_session_file_of_an_8_digit_id_is_still_found_by_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_, file) = run(dir.path());
    let old = file.with_file_name("3f9c2a10-general.jsonl");
    std::fs::rename(&file, &old).unwrap();
    let out = sessions(dir.path(), &["show", "3f9c2a10"]);
    assert_exit(&out, 0);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().next().unwrap(),
        old.display().to_string()
    );
}
