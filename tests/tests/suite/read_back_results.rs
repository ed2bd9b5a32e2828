//! Results and merge files as untrusted input (issue 32, attack 3), through
//! the real `subagent batch`: a results file swapped for a link to a file
//! outside, `batch merge -o` meeting a link planted at its temporary
//! file's name, and a forged results file renamed over the live one while
//! the batch runs.
//!
//! Here the test itself does what a tool (or any process that can write
//! the directory) would: the other wall, which keeps a tool from writing
//! the results file at all, is tested with the sandbox; this checks that
//! the batch holds when something gets there anyway.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use super::batch_cmd::{BatchDir, assert_workers_gone, ids, ok_task, stderr};
use super::planted::plant_link_named_for_child;
use super::support::*;

/// A file outside the batch's reach: what must come out unchanged.
const PRECIOUS: &str = "precious line\nno newline after this";

/// Another JSONL file outside the batch's reach, whose last line is torn:
/// read as a results file, its tail would be cut and lines appended.
const OUTSIDE_JSONL: &str =
    "{\"id\":\"x1\",\"status\":\"ok\"}\n{\"id\":\"x2\",\"note\":\"still bein";

#[test]
fn a_results_file_swapped_for_a_link_is_refused_and_the_file_it_names_left_alone() {
    let dir = BatchDir::new();
    dir.write_tasks(&[ok_task("t1"), ok_task("t2")]);
    let first = dir.batch("results.jsonl", &[]).output().unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let sessions = dir.session_files().len();

    // Swapped between runs: the results file moved aside, a link in its
    // place to a JSONL file elsewhere whose last line is still being written.
    let outside = dir.path("outside.jsonl");
    std::fs::write(&outside, OUTSIDE_JSONL).unwrap();
    std::fs::rename(dir.path("results.jsonl"), dir.path("moved.jsonl")).unwrap();
    symlink(&outside, dir.path("results.jsonl")).unwrap();
    dir.write_tasks(&[ok_task("t1"), ok_task("t2"), ok_task("t3")]);

    let out = dir.batch("results.jsonl", &[]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{} is a symbolic link",
            dir.path("results.jsonl").display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), OUTSIDE_JSONL);
    assert_eq!(dir.session_files().len(), sessions, "nothing ran");
    assert_nothing_runs_in(&dir.workspace());
}

/// `subagent batch merge INPUTS -o OUTPUT` in the batch's directory, with
/// a link to `target` planted, before the merge starts, at the name of the
/// temporary file the merge will create (it carries the merge's pid).
fn merge_with_planted_temp(
    dir: &BatchDir,
    inputs: &[&str],
    output: &str,
    target: &Path,
) -> Command {
    let mut command = Command::new(binary("subagent"));
    command.current_dir(dir.path("")).args(["batch", "merge"]);
    command
        .args(inputs)
        .arg("-o")
        .arg(output)
        .stdin(Stdio::null());
    plant_link_named_for_child(
        &mut command,
        &dir.path(&format!(".{output}.merge-")),
        ".tmp",
        target,
    );
    command
}

#[test]
fn batch_merge_does_not_write_through_a_link_planted_at_its_temporary_file() {
    let dir = BatchDir::new();
    let tasks: Vec<String> = (0..4).map(|n| ok_task(&format!("id-{n}"))).collect();
    dir.write_tasks(&tasks);
    for i in 0..2 {
        let results = format!("shard-{i}.jsonl");
        let out = dir
            .batch(&results, &["--shard", &format!("{i}/2")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let outside = dir.path("outside.txt");
    std::fs::write(&outside, PRECIOUS).unwrap();

    let out = merge_with_planted_temp(
        &dir,
        &["shard-0.jsonl", "shard-1.jsonl"],
        "merged.jsonl",
        &outside,
    )
    .output()
    .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        PRECIOUS,
        "the merge wrote through the planted link: {err}"
    );
    let mut merged = ids(&dir.results("merged.jsonl"));
    merged.sort();
    assert_eq!(merged, ["id-0", "id-1", "id-2", "id-3"]);
    let meta = std::fs::symlink_metadata(dir.path("merged.jsonl")).unwrap();
    assert!(meta.file_type().is_file(), "{meta:?}");
    // Nothing left at the temporary names: the planted link was removed
    // (never followed) and the merge's own file renamed into place.
    let leftovers: Vec<String> = std::fs::read_dir(dir.path(""))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".merge-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A results line as a forger writes it: every task claimed done.
fn forged_line(id: &str) -> String {
    format!(
        r#"{{"id":"{id}","status":"ok","cliExit":0,"agent":"general","output":"forged","usage":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"cost":0,"turns":0}},"durationMs":1}}"#
    )
}

#[test]
fn a_results_file_renamed_over_mid_batch_stops_the_batch_naming_it_and_keeps_its_lines() {
    let dir = BatchDir::new();
    // t1 ends at once; t2 and t3 wait for the go file in the workspace,
    // so the swap below happens while they run. In place (no layer): a
    // file made in the workspace under a running layer's view is not one
    // its worker can be sure to see.
    let gated = |id: &str| format!(r#"{{"id":"{id}","task":"fixture:gated-frames-1"}}"#);
    dir.write_tasks(&[ok_task("t1"), gated("t2"), gated("t3")]);
    let child = dir
        .batch("results.jsonl", &["-j", "3", "--isolation", "none"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("t1's line", || dir.results("results.jsonl").len() == 1);

    let forged = dir.path("forged.jsonl");
    std::fs::write(
        &forged,
        format!("{}\n{}\n", forged_line("t2"), forged_line("t3")),
    )
    .unwrap();
    std::fs::rename(&forged, dir.path("results.jsonl")).unwrap();
    std::fs::write(dir.workspace().join(subagent_tests::GO_FILE), b"").unwrap();

    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(9), "{err}");
    let results = dir.path("results.jsonl");
    assert!(
        err.contains(&format!("results file {} was replaced", results.display())),
        "{err}"
    );
    // The forged file is left where it is, for the operator to look at.
    let at_path: Vec<String> = dir
        .results("results.jsonl")
        .iter()
        .map(|l| l["output"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(at_path, ["forged", "forged"]);
    // The batch's own lines are kept beside it, under the name it gave.
    let saved_name = err
        .split("saved to ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .unwrap_or_else(|| panic!("no saved file named: {err}"));
    let saved: Vec<Value> = std::fs::read_to_string(saved_name)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(ids(&saved)[0], "t1", "{saved:?}");
    assert!(saved.iter().all(|l| l["output"] != "forged"), "{saved:?}");
    assert_workers_gone(&dir);
    assert_nothing_runs_in(&dir.workspace());
}
