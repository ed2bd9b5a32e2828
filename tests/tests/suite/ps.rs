//! `subagent ps` through the real CLI: live runs of `run`, nested runs,
//! `batch` and `serve --stdio` are listed with what they do now, and
//! leave the list when they end, also when their supervisor is SIGKILLed;
//! files planted in `.live/` (forged, copied, replayed under a lock of
//! their own, FIFOs, links) are never listed; `--watch` redraws in place
//! in a real terminal (tmux) and quits on q and on Ctrl-C.
//!
//! Nothing here sleeps in place of an event: a held scripted model keeps
//! a run where the test wants it, and the test polls `ps` itself until
//! the state it waits for shows (or a deadline passes).

use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::status_line::{Tmux, shell_line};
use super::support::*;

/// Longest wait for `ps` to show a state (30 s: fifty workers start on a
/// loaded 2-core machine well within it).
const WAIT: Duration = Duration::from_secs(30);

/// How often `ps` is asked while waiting (50 ms).
const POLL: Duration = Duration::from_millis(50);

/// `subagent ps --json --sessions-dir SESSIONS`: the array it prints.
fn ps_json(sessions: &Path) -> Vec<Value> {
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
fn ps_table(sessions: &Path) -> String {
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
fn wait_for_ps(sessions: &Path, what: &str, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
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

/// Waits until nothing runs in `dir` any more (a killed supervisor's
/// worker goes a moment after it), then asserts it.
fn wait_nothing_runs_in(dir: &Path) {
    let deadline = Instant::now() + WAIT;
    while !processes_in(dir).is_empty() && Instant::now() < deadline {
        std::thread::sleep(POLL);
    }
    assert_nothing_runs_in(dir);
}

/// The records left in `<sessions>/.live` (spares, kept locked by their
/// process for its next run, have dot names and are left out).
fn live_files(sessions: &Path) -> Vec<String> {
    std::fs::read_dir(sessions.join(".live"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// Every file in `<sessions>/.live`, spares too.
fn all_live_files(sessions: &Path) -> Vec<String> {
    std::fs::read_dir(sessions.join(".live"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn state_of(run: &Value) -> &str {
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
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Gone before the supervisor exited: no wait needed.
    assert_eq!(ps_json(sessions.path()), Vec::<Value>::new());
    // The process is gone, so are its spares: `ps` removed them.
    assert_eq!(all_live_files(sessions.path()), Vec::<String>::new());
    assert_nothing_runs_in(ws.path());
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
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(ps_json(sessions.path()), Vec::<Value>::new());
    assert_nothing_runs_in(ws.path());
}

fn interrupt(child: &Child) {
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
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(ps_json(sessions.path()), Vec::<Value>::new());
    // The process is gone, so are its spares: `ps` removed them.
    assert_eq!(all_live_files(sessions.path()), Vec::<String>::new());
    assert_nothing_runs_in(ws.path());
}

#[test]
fn ps_shows_the_runs_queued_for_a_slot() {
    let ws = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    // One slot for the whole server (config.toml's max_concurrent): the
    // second job waits for it. The config dir holds the session key too,
    // so `ps` looks with the same one.
    let config_home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(config_home.path().join("subagent")).unwrap();
    std::fs::write(
        config_home.path().join("subagent/config.toml"),
        "max_concurrent = 1\n",
    )
    .unwrap();
    let mut server = Server::start_with(ws.path(), sessions.path(), |c| {
        c.env("XDG_CONFIG_HOME", config_home.path());
    });
    let jobs: Vec<String> = [1, 2]
        .iter()
        .map(|id| {
            let answer = server.ask(json!({"id": id, "method": "spawn",
                "params": {"task": "fixture:sleep", "background": true}}));
            answer["result"]["jobId"].as_str().unwrap().to_owned()
        })
        .collect();
    let ps = |sessions: &Path| {
        let out = Command::new(binary("subagent"))
            .args(["ps", "--json", "--sessions-dir"])
            .arg(sessions)
            .env("XDG_CONFIG_HOME", config_home.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let deadline = Instant::now() + WAIT;
    let runs = loop {
        let runs = ps(sessions.path());
        let states: Vec<&str> = runs.as_array().unwrap().iter().map(state_of).collect();
        if states.contains(&"queued") && states.contains(&"waiting_for_model") {
            break runs;
        }
        assert!(Instant::now() < deadline, "no queued run seen: {runs:#}");
        std::thread::sleep(POLL);
    };
    let queued = runs
        .as_array()
        .unwrap()
        .iter()
        .find(|r| state_of(r) == "queued")
        .unwrap();
    assert!(
        queued["pid"].is_null(),
        "a queued run has no worker: {queued:#}"
    );
    for (n, job) in jobs.iter().enumerate() {
        server.ask(json!({"id": 10 + n, "method": "cancel", "params": {"jobId": job}}));
        server.ask(json!({"id": 20 + n, "method": "wait", "params": {"jobId": job}}));
    }
    drop(server.stdin);
    assert!(server.child.wait().unwrap().success());
    assert_eq!(ps(sessions.path()), json!([]));
    assert_nothing_runs_in(ws.path());
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
    assert_eq!(live_files(sessions.path()).len(), 1);
    assert_eq!(ps_json(sessions.path()), Vec::<Value>::new());
    assert_eq!(
        all_live_files(sessions.path()),
        Vec::<String>::new(),
        "ps removes a dead run's record (and a dead process's spares)"
    );
    wait_nothing_runs_in(ws.path());
}

/// A `serve --stdio` with the fixture worker, its stdin and stdout.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn start(ws: &Path, sessions: &Path) -> Self {
        Self::start_with(ws, sessions, |_| {})
    }

    fn start_with(ws: &Path, sessions: &Path, setup: impl FnOnce(&mut Command)) -> Self {
        let mut command = fixture_command(&["serve", "--stdio"], sessions);
        setup(&mut command);
        let mut child = command
            .current_dir(ws)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
        }
    }

    /// Sends `request` and returns the answer with its id (notifications
    /// in between are skipped).
    fn ask(&mut self, request: Value) -> Value {
        writeln!(self.stdin, "{request}").unwrap();
        self.stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server closed stdout"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == request["id"] {
                return message;
            }
        }
    }
}

/// Takes a POSIX write lock on `file` in this process: what anything that
/// can write the sessions dir can do to a file it planted there.
fn hold_lock(file: &std::fs::File) {
    let request = libc::flock {
        l_type: libc::F_WRLCK as libc::c_short,
        l_whence: libc::SEEK_SET as libc::c_short,
        l_start: 0,
        l_len: 0,
        l_pid: 0,
    };
    // SAFETY: fcntl(2) on a descriptor this test owns, with a valid flock.
    let done = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &request) };
    assert_eq!(done, 0, "{}", std::io::Error::last_os_error());
}

fn start_of(pid: u32) -> u64 {
    subagent_supervisor::live::process::start_time(pid).unwrap()
}

fn plant(path: &Path, bytes: &[u8]) -> std::fs::File {
    std::fs::write(path, bytes).unwrap();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    hold_lock(&file);
    file
}

#[test]
fn forged_copied_replayed_and_odd_files_in_live_are_never_listed() {
    let ws = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let mut server = Server::start(ws.path(), sessions.path());
    let spawned = server.ask(json!({"id": 1, "method": "spawn",
        "params": {"task": "fixture:sleep", "background": true}}));
    let job = spawned["result"]["jobId"].as_str().unwrap().to_owned();
    let runs = wait_for_ps(sessions.path(), "the server's run", |runs| runs.len() == 1);
    let run_id = runs[0]["runId"].as_str().unwrap().to_owned();
    assert_eq!(
        runs[0]["parentRunId"],
        Value::Null,
        "a server's job has no parent run"
    );
    let live = sessions.path().join(".live");
    let record = std::fs::read(live.join(&run_id)).unwrap();
    let text = String::from_utf8(record.clone()).unwrap();

    // Planted beside the live run, each under a lock of the test's own:
    // a record made up by the process that holds it, naming itself as the
    // supervisor (pid, start time) and the file's name as the run, all
    // true but for its seal, which it cannot make without the key;
    let other = "0190ffffffffffffffffffffffffffff";
    let me = std::process::id();
    let my_start = subagent_supervisor::live::process::start_time(me).unwrap();
    let forged = text
        .replace(&run_id, other)
        .replace(
            &format!("\"supervisorPid\":{}", server.child.id()),
            &format!("\"supervisorPid\":{me}"),
        )
        .replace(
            &format!("\"supervisorStart\":{}", start_of(server.child.id())),
            &format!("\"supervisorStart\":{my_start}"),
        );
    assert!(
        forged.contains(&format!("\"supervisorStart\":{my_start}")),
        "{forged}"
    );
    let _forged = plant(&live.join(other), forged.as_bytes());
    // the live run's record, whole, under another name;
    let _copied = plant(&live.join("0190eeeeeeeeeeeeeeeeeeeeeeeeeeee"), &record);
    // a FIFO (a read would wait forever), a link to the real record, a
    // file of a gigabyte.
    make_fifo(&live.join("0190dddddddddddddddddddddddddddd"));
    std::os::unix::fs::symlink(
        live.join(&run_id),
        live.join("0190cccccccccccccccccccccccccccc"),
    )
    .unwrap();
    let big = plant(&live.join("0190bbbbbbbbbbbbbbbbbbbbbbbbbbbb"), b"");
    big.set_len(1 << 30).unwrap();
    let runs = ps_json(sessions.path());
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0]["runId"], run_id.as_str());
    let table = ps_table(sessions.path());
    assert!(
        table.contains("5 file(s) in .live/ not believed"),
        "{table}"
    );

    // The run ends; its supervisor lives on. Its very record, put back and
    // locked by someone else, is a replay: not listed.
    let cancelled = server.ask(json!({"id": 2, "method": "cancel", "params": {"jobId": job}}));
    assert_eq!(cancelled["result"]["cancelled"], true, "{cancelled}");
    server.ask(json!({"id": 3, "method": "wait", "params": {"jobId": job}}));
    assert!(!live.join(&run_id).exists(), "the ended run's record stays");
    let _replayed = plant(&live.join(&run_id), &record);
    assert_eq!(ps_json(sessions.path()), Vec::<Value>::new());

    drop(server.stdin);
    assert!(server.child.wait().unwrap().success());
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
