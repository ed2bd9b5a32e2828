//! `subagent ps` through the real CLI: live runs of `run`, nested runs and
//! `batch` are listed with what they do now, and leave the list when they
//! end, also when their supervisor is SIGKILLed; `--watch` redraws in
//! place in a real terminal (tmux) and quits on q and on Ctrl-C. Runs of
//! `serve --stdio`, queued ones and planted records: [`super::ps_serve`].
//!
//! Nothing here sleeps in place of an event: a held scripted model keeps
//! a run where the test wants it, and the test polls `ps` itself until
//! the state it waits for shows (or a deadline passes).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::status_line::{Tmux, shell_line};
use super::support::*;

/// Longest wait for `ps` to show a state (30 s: fifty workers start on a
/// loaded 2-core machine well within it).
pub(super) const WAIT: Duration = Duration::from_secs(30);

/// How often `ps` is asked while waiting (50 ms).
pub(super) const POLL: Duration = Duration::from_millis(50);

/// `subagent ps --json --sessions-dir SESSIONS`: the array it prints.
pub(super) fn ps_json(sessions: &Path) -> Vec<Value> {
    let out = Command::new(binary("subagent"))
        .args(["ps", "--json", "--sessions-dir"])
        .arg(sessions)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "ps: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let runs: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "ps --json printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    runs.as_array()
        .cloned()
        .unwrap_or_else(|| panic!("not an array: {runs}"))
}

/// `subagent ps --sessions-dir SESSIONS`: the table.
pub(super) fn ps_table(sessions: &Path) -> String {
    let out = Command::new(binary("subagent"))
        .args(["ps", "--sessions-dir"])
        .arg(sessions)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    String::from_utf8(out.stdout).unwrap()
}

/// Asks `ps --json` until `ready` holds for its runs; those runs.
pub(super) fn wait_for_ps(
    sessions: &Path,
    what: &str,
    ready: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = Instant::now() + WAIT;
    loop {
        let runs = ps_json(sessions);
        if ready(&runs) {
            return runs;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not seen within {WAIT:?}; ps said {runs:#?}"
        );
        std::thread::sleep(POLL);
    }
}

/// The files in `<sessions>/.live`: the records, and with `spares` also
/// the spares (kept locked by their process for its next run, dot names).
fn live_files(sessions: &Path, spares: bool) -> Vec<String> {
    std::fs::read_dir(sessions.join(".live"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| spares || !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// A run that ended with `code` left `ps` and the live dir (its process
/// is gone, so are its spares: `ps` removed them), and nothing it started
/// runs in `ws`.
fn assert_ended_and_unlisted(out: &std::process::Output, code: i32, sessions: &Path, ws: &Path) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(ps_json(sessions), Vec::<Value>::new());
    assert_eq!(live_files(sessions, true), Vec::<String>::new());
    assert_nothing_runs_in(ws);
}

pub(super) fn state_of(run: &Value) -> &str {
    run["state"].as_str().unwrap_or_default()
}

#[test]
fn ps_shows_a_run_waiting_for_the_model_its_silence_growing_and_nothing_once_it_ended() {
    let ws = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start_held(vec![text_turn("done")]);
    let run = model
        .run_command(ws.path(), sessions.path())
        .args(["--task", "Say done.", "--json", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        model.wait_for_requests(1, WAIT),
        "the run never asked the model"
    );
    let runs = wait_for_ps(sessions.path(), "a run waiting for the model", |runs| {
        runs.len() == 1 && state_of(&runs[0]) == "waiting_for_model"
    });
    let first = &runs[0];
    assert_eq!(first["agent"], "general");
    assert_eq!(first["model"], "scripted");
    assert_eq!(first["turns"], 1);
    assert_eq!(first["parentRunId"], Value::Null);
    assert_eq!(first["supervisorPid"], run.id());
    assert!(first["pid"].as_u64().is_some_and(|p| p > 0), "{first:#}");
    assert!(
        first["sessionFile"]
            .as_str()
            .is_some_and(|f| Path::new(f).exists())
    );
    let silent = first["silentMs"].as_u64().unwrap();
    // Nothing comes from the worker while the model holds its answer: the
    // silence grows from one look to a later one.
    wait_for_ps(sessions.path(), "the silence growing", |runs| {
        runs.len() == 1 && runs[0]["silentMs"].as_u64().unwrap() >= silent + 200
    });
    let table = ps_table(sessions.path());
    assert!(table.contains("waiting for the model"), "{table}");

    model.release();
    let out = run.wait_with_output().unwrap();
    // Gone before the supervisor exited: no wait needed.
    assert_ended_and_unlisted(&out, 0, sessions.path(), ws.path());
}

#[test]
fn ps_shows_a_parent_running_the_subagent_tool_and_its_nested_child() {
    let ws = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start_held(vec![
        tool_call_turn(
            "call_sub",
            "subagent",
            &json!({"agent": "general", "task": "Take your time."}),
        ),
        text_turn("child done"),
        text_turn("parent done"),
    ]);
    let root = model
        .run_command(ws.path(), sessions.path())
        .args([
            "--task",
            "Delegate.",
            "--max-depth",
            "2",
            "--tools",
            "subagent",
        ])
        .args(["--json", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The parent's turn is let go; the child's request is held: the
    // parent stays in its `subagent` tool until the test releases it.
    model.release();
    assert!(
        model.wait_for_requests(2, WAIT),
        "the child never asked the model"
    );
    let runs = wait_for_ps(
        sessions.path(),
        "the parent in its tool, the child waiting",
        |runs| {
            runs.len() == 2
                && runs.iter().any(|r| state_of(r) == "running_tool")
                && runs.iter().any(|r| state_of(r) == "waiting_for_model")
        },
    );
    let parent = runs.iter().find(|r| state_of(r) == "running_tool").unwrap();
    let child = runs
        .iter()
        .find(|r| state_of(r) == "waiting_for_model")
        .unwrap();
    assert_eq!(parent["tool"], "subagent");
    assert_eq!(child["parentRunId"], parent["runId"], "{runs:#?}");
    assert_ne!(child["pid"], parent["pid"]);
    let table = ps_table(sessions.path());
    assert!(table.contains("running tool subagent"), "{table}");

    model.release();
    model.release();
    let out = root.wait_with_output().unwrap();
    assert_ended_and_unlisted(&out, 0, sessions.path(), ws.path());
}

pub(super) fn interrupt(child: &Child) {
    // SAFETY: a plain kill(2) of a process this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
}

#[test]
fn ps_lists_every_run_of_a_batch_of_fifty_and_none_after_it() {
    let ws = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let tasks = ws.path().join("tasks.jsonl");
    let lines: Vec<String> = (0..50)
        .map(|i| json!({"id": format!("t{i}"), "task": "fixture:sleep"}).to_string())
        .collect();
    std::fs::write(&tasks, lines.join("\n") + "\n").unwrap();
    let mut batch = fixture_command(&["batch"], sessions.path());
    batch
        .arg(&tasks)
        .args(["-j", "50", "--max-concurrent", "50", "--results"])
        .arg(ws.path().join("results.jsonl"))
        .current_dir(ws.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let batch = batch.spawn().unwrap();
    let runs = wait_for_ps(
        sessions.path(),
        "fifty runs waiting for the model",
        |runs| runs.len() == 50 && runs.iter().all(|r| state_of(r) == "waiting_for_model"),
    );
    assert!(runs.iter().all(|r| r["supervisorPid"] == batch.id()));
    let mut ids: Vec<&str> = runs.iter().map(|r| r["runId"].as_str().unwrap()).collect();
    ids.dedup();
    assert_eq!(ids.len(), 50);

    interrupt(&batch);
    let out = batch.wait_with_output().unwrap();
    assert_ended_and_unlisted(&out, 130, sessions.path(), ws.path());
}

#[test]
fn a_run_whose_supervisor_was_sigkilled_leaves_the_list() {
    let ws = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let mut run = fixture_cli(sessions.path());
    run.args(["--task", "fixture:sleep"])
        .current_dir(ws.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut run = run.spawn().unwrap();
    wait_for_ps(sessions.path(), "the run", |runs| {
        runs.len() == 1 && state_of(&runs[0]) == "waiting_for_model"
    });
    run.kill().unwrap();
    run.wait().unwrap();
    // Its record is still there (nobody removed it), but nobody holds it.
    assert_eq!(live_files(sessions.path(), false).len(), 1);
    assert_eq!(ps_json(sessions.path()), Vec::<Value>::new());
    assert_eq!(
        live_files(sessions.path(), true),
        Vec::<String>::new(),
        "ps removes a dead run's record (and a dead process's spares)"
    );
    // A killed supervisor's worker goes a moment after it.
    super::support::wait_until("the worker gone", || processes_in(ws.path()).is_empty());
    assert_nothing_runs_in(ws.path());
}

#[test]
fn watch_piped_prints_one_array_per_interval_until_interrupted() {
    let sessions = tempfile::tempdir().unwrap();
    let mut watch = Command::new(binary("subagent"))
        .args([
            "ps",
            "--watch",
            "--json",
            "--interval",
            "100ms",
            "--sessions-dir",
        ])
        .arg(sessions.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(watch.stdout.take().unwrap()).lines();
    for _ in 0..3 {
        let line = lines.next().unwrap().unwrap();
        assert_eq!(serde_json::from_str::<Value>(&line).unwrap(), json!([]));
    }
    interrupt(&watch);
    assert_eq!(watch.wait().unwrap().code(), Some(0));
}

/// The title line of a `ps --watch` frame on `screen`, if one shows.
fn titles(screen: &str) -> Vec<&str> {
    screen
        .lines()
        .filter(|l| l.starts_with("subagent ps: "))
        .collect()
}

#[test]
fn watch_redraws_in_place_in_a_terminal_and_quits_on_q_and_on_ctrl_c() {
    let ws = tempfile::tempdir().unwrap();
    let sessions = ws.path().join("sessions");
    let record = ws.path().join("pane.log");
    let Some(tmux) = Tmux::start_or_skip("ps_watch", ws.path(), record) else {
        return;
    };
    let mut run = fixture_cli(&sessions);
    run.args(["--task", "fixture:sleep"])
        .current_dir(ws.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let run = run.spawn().unwrap();
    wait_for_ps(&sessions, "the run", |runs| runs.len() == 1);
    let watch: Vec<String> = [
        binary("subagent").to_string_lossy().into_owned(),
        "ps".into(),
        "--watch".into(),
        "--interval".into(),
        "200ms".into(),
        "--sessions-dir".into(),
        sessions.to_string_lossy().into_owned(),
    ]
    .into();
    for (quit, round) in [("q", 1), ("C-c", 2)] {
        tmux.type_line(&shell_line(&watch));
        let first = tmux.wait_for("a frame", Tmux::screen, |s| {
            s.contains("waiting for the model") && titles(s).len() == 1
        });
        // The next frame replaces the first where it stood: one title on
        // the screen, its run's time in state moved on.
        let title = titles(&first)[0].to_owned();
        let next = tmux.wait_for("the next frame", Tmux::screen, |s| {
            titles(s).len() == 1 && titles(s)[0] != title && s.contains("waiting for the model")
        });
        assert!(
            next.lines()
                .next()
                .unwrap()
                .starts_with("subagent ps: 1 live"),
            "{next}"
        );
        tmux.run(&["send-keys", quit]);
        tmux.wait_for("the watch to quit", Tmux::screen, |s| {
            s.matches("exit:0").count() == round && titles(s).is_empty()
        });
    }
    // The terminal was given back: the alternate screen left, the cursor
    // shown again, each time.
    let written = tmux.recorded();
    assert_eq!(written.matches("\x1b[?1049l").count(), 2, "{written:?}");
    assert_eq!(written.matches("\x1b[?25h").count(), 2);
    interrupt(&run);
    let mut run = run;
    run.wait().unwrap();
    tmux.kill();
    assert_nothing_runs_in(ws.path());
    assert_eq!(ps_json(&sessions), Vec::<Value>::new());
}
