//! `subagent sessions replay` end to end: a run with real tool calls is
//! recorded through the CLI against the scripted model, the model is
//! stopped, and the recording is replayed by the real CLI, supervisor,
//! worker and tools with no model reachable. Asserts the report, the exit
//! status, the replay's own session file, and that no process of either
//! run survives.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::*;

/// The exit status of a replay that diverged (`exit_codes::REPLAY_DIVERGED`).
const REPLAY_DIVERGED: i32 = 8;

const NOTES: &str = "alpha\nbeta\nneedle: the line to find\n";

/// A recorded run: its workspace, sessions dir and session file.
struct Recorded {
    workspace: tempfile::TempDir,
    sessions: tempfile::TempDir,
    file: PathBuf,
    run_id: String,
}

/// Records a three-turn run (bash_read of notes.txt, bash_find, an answer)
/// and stops the model before returning.
fn record() -> Recorded {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("notes.txt"), NOTES).unwrap();
    std::fs::create_dir(workspace.path().join("src")).unwrap();
    std::fs::write(workspace.path().join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_read", "bash_read", &json!({"path": "notes.txt"})),
        tool_call_turn("call_find", "bash_find", &json!({"pattern": "**/*.rs"})),
        text_turn("The needle is in notes.txt."),
    ]);
    let out = model
        .run_command(workspace.path(), sessions.path())
        .args([
            "--timeout",
            "60",
            "--json",
            "--tools",
            "bash_read,bash_find",
        ])
        .args(["--task", "Find the needle."])
        .output()
        .unwrap();
    assert_nothing_runs_in(workspace.path());
    assert_eq!(model.replies_left(), 0, "every scripted turn was asked for");
    // No model from here on: a replay that called one would fail.
    drop(model);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_children_reaped(&result);
    let file = PathBuf::from(
        result["details"]["results"][0]["sessionFile"]
            .as_str()
            .unwrap(),
    );
    let lines = check_session_file(&file);
    assert_eq!(lines[0]["tools"], json!(["bash_read", "bash_find"]));
    let run_id = lines[0]["runId"].as_str().unwrap().to_owned();
    Recorded {
        workspace,
        sessions,
        file,
        run_id,
    }
}

/// `subagent sessions replay RUN` with `extra` flags, from the recorded
/// workspace (a recording does not choose where a replay works:
/// `session_evidence`); asserts that nothing it started runs on in it.
fn replay(rec: &Recorded, run: &str, extra: &[&str]) -> Output {
    let out = Command::new(binary("subagent"))
        .current_dir(rec.workspace.path())
        .args(["sessions", "replay", run])
        .arg("--sessions-dir")
        .arg(rec.sessions.path())
        .args(extra)
        .env_remove("SUBAGENT_WORKER")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_nothing_runs_in(rec.workspace.path());
    out
}

fn of_type<'a>(lines: &'a [Value], ty: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == ty).collect()
}

/// (callId, name, args) of every tool call of a session file.
fn calls(lines: &[Value]) -> Vec<(Value, Value, Value)> {
    of_type(lines, "tool_call")
        .into_iter()
        .map(|l| (l["callId"].clone(), l["name"].clone(), l["args"].clone()))
        .collect()
}

/// The replay's session file named on stderr (text mode).
fn replay_file(out: &Output) -> PathBuf {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let file = stderr
        .lines()
        .find_map(|l| l.split_once("session file: ").map(|(_, f)| f))
        .unwrap_or_else(|| panic!("no session file on stderr: {stderr}"));
    PathBuf::from(file)
}

#[test]
fn replay_without_a_model_matches_its_recording() {
    let rec = record();
    let out = replay(&rec, &rec.run_id, &["--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is no JSON report ({e}); stderr: {stderr}"));
    assert_eq!(report["matches"], true, "{report:#}");
    assert_eq!(
        (report["turns"].clone(), report["toolCalls"].clone()),
        (json!(3), json!(2))
    );
    assert!(report.get("divergence").is_none(), "{report:#}");

    let replayed_file = Path::new(report["sessionFile"].as_str().unwrap());
    assert_ne!(replayed_file, rec.file, "the replay writes its own file");
    let replayed = check_session_file(replayed_file);
    assert_reaped(&replayed);
    let recorded = check_session_file(&rec.file);
    assert_eq!(calls(&replayed), calls(&recorded));
    assert_eq!(calls(&replayed).len(), 2);
    let outputs = |lines: &[Value]| -> Vec<Value> {
        of_type(lines, "tool_result")
            .iter()
            .map(|l| l["output"].clone())
            .collect()
    };
    assert_eq!(outputs(&replayed), outputs(&recorded));
    assert!(outputs(&replayed)[0].as_str().unwrap().contains("needle"));
    assert_eq!(replayed[0]["provider"], "openai-chat");
    assert_eq!(replayed[0]["tools"], json!(["bash_read", "bash_find"]));
    assert_eq!(replayed.last().unwrap()["status"], "completed");

    // The text report says the same in one line.
    let out = replay(&rec, &rec.run_id, &[]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "replay matches: 3 turns, 2 tool calls, completed"
    );
    assert_reaped(&check_session_file(&replay_file(&out)));
}

#[test]
fn a_changed_file_makes_the_replay_diverge_at_its_read() {
    let rec = record();
    std::fs::write(
        rec.workspace.path().join("notes.txt"),
        "gamma\nno needle here\n",
    )
    .unwrap();
    let out = replay(&rec, &rec.run_id, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(REPLAY_DIVERGED),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0], "replay diverged at turn 1 (tool_result)",
        "{stdout}"
    );
    assert!(
        lines[1].starts_with("  recorded: bash_read (ok): "),
        "{stdout}"
    );
    assert!(
        lines[1].contains("alpha") && !lines[1].contains("gamma"),
        "{stdout}"
    );
    assert!(
        lines[2].starts_with("  replayed: bash_read (ok): "),
        "{stdout}"
    );
    assert!(
        lines[2].contains("gamma") && !lines[2].contains("alpha"),
        "{stdout}"
    );
    assert_reaped(&check_session_file(&replay_file(&out)));

    let out = replay(&rec, &rec.run_id, &["--json"]);
    assert_eq!(out.status.code(), Some(REPLAY_DIVERGED));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["matches"], false);
    assert_eq!(report["divergence"]["turn"], 1);
    assert_eq!(report["divergence"]["kind"], "tool_result");
    assert!(report["divergence"]["recorded"].as_str().unwrap().len() <= 300 + 3 * 2);
    assert_reaped(&check_session_file(Path::new(
        report["sessionFile"].as_str().unwrap(),
    )));
}

#[test]
fn a_recording_cut_short_diverges_where_it_ends() {
    let rec = record();
    // The copy loses the last turn: its assistant message and usage lines.
    let text = std::fs::read_to_string(&rec.file).unwrap();
    let kept: String = text
        .lines()
        .filter(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let last_turn = v["turn"] == 3;
            !(last_turn && (v["type"] == "message" || v["type"] == "usage"))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(text.lines().count() - kept.lines().count(), 2, "{text}");
    let copies = tempfile::tempdir().unwrap();
    let cut = copies.path().join("cut.jsonl");
    // Cut by hand, so chained anew: a file cut by a tool is not replayed.
    std::fs::write(&cut, sign_as_this_user(&kept)).unwrap();

    let out = replay(&rec, cut.to_str().unwrap(), &["--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(REPLAY_DIVERGED), "stderr: {stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["divergence"],
        json!({
            "turn": 3,
            "kind": "recording_ended",
            "recorded": "the recorded run ended after 2 turns",
            "replayed": "the replay asked for turn 3",
        }),
        "{report:#}"
    );
    let replayed = check_session_file(Path::new(report["sessionFile"].as_str().unwrap()));
    assert_reaped(&replayed);
    assert_eq!(replayed.last().unwrap()["status"], "failed");
}

#[test]
fn an_old_recording_without_tools_replays_with_the_agents_tools_and_a_warning() {
    let rec = record();
    // A header without `tools`, as an older writer left it (signed here: an
    // older writer's file carries no chain, and is not replayed).
    let text = std::fs::read_to_string(&rec.file).unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    lines[0].as_object_mut().unwrap().remove("tools");
    let copies = tempfile::tempdir().unwrap();
    let old = copies.path().join("old.jsonl");
    let old_text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&old, sign_as_this_user(&old_text)).unwrap();

    let out = replay(&rec, old.to_str().unwrap(), &["--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(
        stderr.contains("warning: the recording does not list its tools"),
        "{stderr}"
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["matches"], true, "{report:#}");
    let replayed = check_session_file(Path::new(report["sessionFile"].as_str().unwrap()));
    assert_reaped(&replayed);
    // `general`'s own list, which is more than the run was given.
    let offered = replayed[0]["tools"].as_array().unwrap();
    assert!(offered.len() > 2, "{offered:?}");
    assert!(offered.contains(&json!("bash_read")) && offered.contains(&json!("bash_find")));
}
