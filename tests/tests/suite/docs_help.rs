//! Every `--help` text of `subagent` is a snapshot under
//! `tests/snapshots/help/`: a help that changes fails CI until its snapshot
//! is regenerated and the change is seen in review
//! (`SNAPSHOTS=overwrite cargo nextest run -p subagent-tests -E 'test(/^docs_/)'`).
//!
//! The commands are found by walking the clap tree through each help's
//! `Commands:` list, so a new subcommand gets a snapshot without anyone
//! listing it here, and a removed one leaves a stale file that fails too.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use snapbox::{Assert, Data};

use super::docs_text::{Help, help_tree, repo_root};
use super::support::binary;

/// Where the help snapshots live, one file per command.
fn snapshot_dir() -> PathBuf {
    repo_root().join("tests/snapshots/help")
}

/// `subagent-sessions-ls.txt` for `subagent sessions ls`.
fn snapshot_name(help: &Help) -> String {
    format!("{}.txt", help.command().replace(' ', "-"))
}

/// Whether this run rewrites snapshots instead of checking them.
fn overwriting() -> bool {
    std::env::var("SNAPSHOTS").is_ok_and(|v| v == "overwrite")
}

#[test]
fn every_help_text_matches_its_snapshot() {
    let tree = help_tree(&binary("subagent"));
    assert!(
        tree.len() > 10,
        "the clap tree walk found only {} commands: is the `Commands:` list still parsed?",
        tree.len()
    );
    let dir = snapshot_dir();
    // Raw: a help text's `...` and `[..]` are text, not snapbox wildcards.
    let assert = Assert::new().action_env("SNAPSHOTS");
    for help in &tree {
        let path = dir.join(snapshot_name(help));
        assert.eq(help.text.as_str(), Data::read_from(&path, None).raw());
    }
    let wanted: BTreeSet<String> = tree.iter().map(snapshot_name).collect();
    let stale: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| !is_wanted(p, &wanted))
        .collect();
    if overwriting() {
        for path in &stale {
            std::fs::remove_file(path).unwrap();
        }
    } else {
        assert!(
            stale.is_empty(),
            "snapshots of commands `subagent` no longer has: {stale:?}; \
             remove them, or run with SNAPSHOTS=overwrite"
        );
    }
}

fn is_wanted(path: &Path, wanted: &BTreeSet<String>) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| wanted.contains(n))
}
