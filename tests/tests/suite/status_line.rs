//! What `subagent run` shows on stderr while it runs, from the outside: the
//! live status line inside a real terminal (a private tmux server; the
//! pane is read with `capture-pane`, and everything written to it is
//! recorded with `pipe-pane`), its absence when stderr is piped or with
//! `--quiet`, and the `RUST_LOG` logs on stderr with stdout left to the
//! answer.
//!
//! Without tmux the terminal tests skip with one line, except under `CI`,
//! where they fail: CI must never pass by skipping.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support;
use subagent_test_support::wait_until_within;

/// Longest wait for something to appear in the pane (60 s): a run against
/// the loopback model takes well under a second; the margin is for a
/// loaded 2-core machine (at load 7 to 12, a run's output once took more
/// than 20 s to show).
const PANE_WAIT: Duration = Duration::from_secs(60);

/// How often the pane is read while waiting (50 ms).
const POLL: Duration = Duration::from_millis(50);

const ANSWER: &str = "The notes say hello from the workspace.";

/// A private tmux server (its own socket name) running one `sh` in a
/// 200x50 pane whose output is also recorded to a file.
pub(super) struct Tmux {
    socket: String,
    cwd: PathBuf,
    record: PathBuf,
}

impl Tmux {
    /// `None` (after one line saying so) when tmux is missing outside CI.
    pub(super) fn start_or_skip(test: &str, cwd: &Path, record: PathBuf) -> Option<Self> {
        if !support::program_or_skip(test, "tmux", "-V", "tmux") {
            return None;
        }
        // Unique per test process and test: tests may share a process.
        let socket = format!("subagent-{test}-{}", std::process::id());
        let tmux = Self {
            socket,
            cwd: cwd.to_owned(),
            record,
        };
        tmux.run(&[
            "new-session",
            "-d",
            "-x",
            "200",
            "-y",
            "50",
            "-c",
            cwd.to_str().unwrap(),
            "env PS1='$ ' sh",
        ]);
        let out = tmux.record.to_str().unwrap().to_owned();
        tmux.run(&["pipe-pane", "-o", &format!("cat >> '{out}'")]);
        Some(tmux)
    }

    pub(super) fn run(&self, args: &[&str]) -> Output {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Types `line` into the shell and presses Enter.
    pub(super) fn type_line(&self, line: &str) {
        self.run(&["send-keys", "-l", line]);
        self.run(&["send-keys", "Enter"]);
    }

    /// The pane as it looks now.
    pub(super) fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p"]).stdout).into_owned()
    }

    /// Everything written to the pane so far.
    pub(super) fn recorded(&self) -> String {
        String::from_utf8_lossy(&std::fs::read(&self.record).unwrap_or_default()).into_owned()
    }

    /// Polls `look` (the screen or the record) until `ready` holds; panics
    /// with the last thing seen after [`PANE_WAIT`].
    pub(super) fn wait_for(
        &self,
        what: &str,
        look: impl Fn(&Self) -> String,
        ready: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + PANE_WAIT;
        loop {
            let seen = look(self);
            if ready(&seen) {
                return seen;
            }
            assert!(
                Instant::now() < deadline,
                "{what} not seen within {PANE_WAIT:?}; last seen:\n{seen}"
            );
            std::thread::sleep(POLL);
        }
    }

    /// Kills the server and waits until no process of it is left.
    pub(super) fn kill(self) {
        self.kill_server();
        wait_until_within("the tmux server to exit", PANE_WAIT, || {
            support::survivors(&self.socket).is_empty()
        });
        // The pane's shell and the recorder end when the server is gone,
        // a moment later.
        wait_until_within("the pane's processes to exit", PANE_WAIT, || {
            runs_in(&self.cwd).is_empty()
        });
        let alive = Command::new("tmux")
            .args(["-L", &self.socket, "has-session"])
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(
            !alive.success(),
            "tmux server {} still answers",
            self.socket
        );
    }
}

/// Pids of the processes whose working directory is in `dir` (the pane's
/// shell and everything started from it); [`support::assert_nothing_runs_in`]
/// is the assertion, this is what to wait on.
fn runs_in(dir: &Path) -> Vec<String> {
    let dir = dir.canonicalize().unwrap();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| std::fs::read_link(e.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(&dir)))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

impl Tmux {
    fn kill_server(&self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .stderr(Stdio::null())
            .status();
    }
}

/// A failed test kills its server too, so a held run does not linger.
impl Drop for Tmux {
    fn drop(&mut self) {
        self.kill_server();
    }
}

/// A workspace with a file to read, and a sessions dir inside it.
pub(super) fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello from the workspace\n").unwrap();
    dir
}

/// `subagent run` against the scripted model, as argv.
pub(super) fn run_args(model: &ScriptedModel, dir: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec![
        support::binary("subagent").to_string_lossy().into_owned(),
        "run".into(),
        "--agent".into(),
        "general".into(),
        "--model".into(),
        "scripted".into(),
        "--base-url".into(),
        model.base_url(),
        "--sessions-dir".into(),
        dir.join("sessions").to_string_lossy().into_owned(),
        "--workspace".into(),
        dir.to_string_lossy().into_owned(),
        "--tools".into(),
        "bash_read".into(),
        "--task".into(),
        "What do the notes say?".into(),
    ];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args
}

/// The argv as one shell line, each word single-quoted.
pub(super) fn shell_line(args: &[String]) -> String {
    let words: Vec<String> = args
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    format!("{}; echo \"exit:$?\"", words.join(" "))
}

/// The two scripted turns: read notes.txt, then answer.
fn read_then_answer() -> Vec<Vec<u8>> {
    vec![
        tool_call_turn("call_1", "bash_read", &json!({"path": "notes.txt"})),
        text_turn(ANSWER),
    ]
}

/// The status line of agent `general` at `turn` (with the elapsed time at
/// its end, e.g. `3.4s`), if the screen shows one.
pub(super) fn status_line<'a>(screen: &'a str, turn: &str) -> Option<&'a str> {
    screen.lines().find(|line| {
        let line = line.trim_end();
        line.contains("general")
            && line.contains(turn)
            && line.contains(" tok")
            && line
                .rsplit(' ')
                .next()
                .is_some_and(|t| t.ends_with('s') && t.starts_with(|c: char| c.is_ascii_digit()))
    })
}

/// Every session file under `sessions` is valid and its worker was reaped.
pub(super) fn check_sessions(sessions: &Path) -> usize {
    let mut files = Vec::new();
    let mut dirs = vec![sessions.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    for file in &files {
        support::assert_reaped(&support::check_session_file(file));
    }
    files.len()
}

#[test]
fn status_line_shows_agent_turn_tool_and_elapsed_in_a_terminal_and_is_gone_after() {
    let dir = workspace();
    let record = dir.path().join("pane-record");
    let Some(tmux) = Tmux::start_or_skip("status_line_in_a_terminal", dir.path(), record) else {
        return;
    };
    let model = ScriptedModel::start_held(read_then_answer());
    tmux.type_line(&shell_line(&run_args(&model, dir.path(), &[])));

    let first = tmux.wait_for("the status line at turn 1", Tmux::screen, |s| {
        status_line(s, "turn 1").is_some()
    });
    assert!(
        first.contains("0 in / 0 out tok"),
        "no usage before the held reply:\n{first}"
    );
    model.release();
    let second = tmux.wait_for("the status line naming bash_read", Tmux::screen, |s| {
        status_line(s, "turn 2").is_some_and(|l| l.contains("bash_read"))
    });
    model.release();

    let done = tmux.wait_for("the run's end", Tmux::screen, |s| s.contains("exit:0"));
    assert!(done.contains(ANSWER), "the answer is printed:\n{done}");
    for turn in ["turn 1", "turn 2"] {
        assert!(
            status_line(&done, turn).is_none(),
            "the status line is cleared before the answer:\n{done}"
        );
    }
    assert!(!done.contains(" tok"), "no status line left:\n{done}");
    let answer_row = done.lines().position(|l| l.trim_end() == ANSWER);
    assert!(
        answer_row.is_some(),
        "the answer has a line of its own:\n{done}"
    );
    assert!(second.contains("bash_read"), "{second}");
    // The record saw the line drawn: what the quiet test's absence means.
    let written = tmux.wait_for("the run's end in the record", Tmux::recorded, |s| {
        s.contains("exit:0")
    });
    assert!(
        written.contains("turn 1") && written.contains("\x1b["),
        "{written}"
    );

    tmux.kill();
    support::assert_nothing_runs_in(dir.path());
    assert_eq!(check_sessions(&dir.path().join("sessions")), 1);
}

#[test]
fn quiet_in_a_terminal_draws_no_status_line_and_names_no_session_file() {
    let dir = workspace();
    let record = dir.path().join("pane-record");
    let Some(tmux) = Tmux::start_or_skip("quiet_in_a_terminal", dir.path(), record) else {
        return;
    };
    let model = ScriptedModel::start(read_then_answer());
    tmux.type_line(&shell_line(&run_args(&model, dir.path(), &["--quiet"])));

    // Everything the run wrote to the terminal, escape codes included.
    let written = tmux.wait_for("the run's end", Tmux::recorded, |s| s.contains("exit:0"));
    assert!(written.contains(ANSWER), "{written}");
    assert!(
        !written.contains(" tok"),
        "a status line was drawn:\n{written}"
    );
    assert!(
        !written.contains("turn 1"),
        "a status line was drawn:\n{written}"
    );
    assert!(!written.contains("session file:"), "{written}");
    assert_eq!(model.replies_left(), 0, "both turns ran");

    tmux.kill();
    support::assert_nothing_runs_in(dir.path());
    assert_eq!(check_sessions(&dir.path().join("sessions")), 1);
}

/// Runs the CLI with stdout and stderr piped.
fn run_piped(args: &[String], rust_log: Option<&str>) -> Output {
    let mut cmd = Command::new(&args[0]);
    cmd.args(&args[1..]).stdin(Stdio::null());
    match rust_log {
        Some(filter) => cmd.env("RUST_LOG", filter),
        None => cmd.env_remove("RUST_LOG"),
    };
    cmd.output().unwrap()
}

/// No escape code and no spinner glyph (the braille block) in `stderr`.
fn assert_plain(stderr: &str) {
    assert!(
        !stderr.contains("\x1b["),
        "escape codes on a pipe: {stderr:?}"
    );
    assert!(
        !stderr
            .chars()
            .any(|c| ('\u{2800}'..='\u{28ff}').contains(&c)),
        "spinner glyphs on a pipe: {stderr:?}"
    );
}

#[test]
fn piped_stderr_gets_no_status_line_and_stdout_only_the_answer() {
    let dir = workspace();
    let model = ScriptedModel::start(read_then_answer());
    let out = run_piped(&run_args(&model, dir.path(), &[]), None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{ANSWER}\n"));
    assert_plain(&stderr);
    assert!(stderr.contains("session file: "), "{stderr}");
    assert!(!stderr.contains(" tok"), "{stderr}");

    let model = ScriptedModel::start(read_then_answer());
    let out = run_piped(&run_args(&model, dir.path(), &["--json"]), None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_plain(&stderr);
    let result: Value = serde_json::from_slice(&out.stdout).expect("stdout is the result object");
    support::assert_valid_result(&result);
    assert_eq!(result["content"][0]["text"], ANSWER);
    support::assert_children_reaped(&result);
    support::assert_nothing_runs_in(dir.path());
    assert_eq!(check_sessions(&dir.path().join("sessions")), 2);
}

#[test]
fn quiet_piped_leaves_stderr_empty_and_stdout_the_answer() {
    let dir = workspace();
    let model = ScriptedModel::start(read_then_answer());
    let out = run_piped(&run_args(&model, dir.path(), &["--quiet"]), None);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{ANSWER}\n"));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    support::assert_nothing_runs_in(dir.path());
    assert_eq!(check_sessions(&dir.path().join("sessions")), 1);
}

#[test]
fn rust_log_debug_puts_supervisor_events_on_stderr_and_leaves_stdout_the_json() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let fixture_run = |rust_log: Option<&str>| {
        let mut cmd = support::fixture_cli(&sessions);
        cmd.args(["--task", "fixture:success", "--json"]);
        match rust_log {
            Some(filter) => cmd.env("RUST_LOG", filter),
            None => cmd.env_remove("RUST_LOG"),
        };
        cmd.output().unwrap()
    };

    let out = fixture_run(Some("subagent_supervisor=debug"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let result: Value = serde_json::from_slice(&out.stdout).expect("stdout is only the result");
    support::assert_valid_result(&result);
    support::assert_children_reaped(&result);
    let spawned = stderr
        .lines()
        .find(|l| l.contains("DEBUG") && l.contains("worker spawned"))
        .unwrap_or_else(|| panic!("no spawn event in stderr:\n{stderr}"));
    let pid = spawned
        .split_whitespace()
        .find_map(|w| w.strip_prefix("pid="))
        .and_then(|p| p.parse::<u32>().ok());
    let lifecycle_pid = support::check_session_file(Path::new(
        result["details"]["results"][0]["sessionFile"]
            .as_str()
            .unwrap(),
    ))
    .iter()
    .rev()
    .find_map(|l| l["pid"].as_u64());
    assert_eq!(pid.map(u64::from), lifecycle_pid, "{spawned}");
    assert!(stderr.contains("session file created"), "{stderr}");
    assert!(stderr.contains("worker exited"), "{stderr}");

    let out = fixture_run(None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let result: Value = serde_json::from_slice(&out.stdout).expect("stdout is only the result");
    support::assert_children_reaped(&result);
    assert!(
        !stderr.contains("DEBUG"),
        "debug lines without RUST_LOG:\n{stderr}"
    );
    assert!(!stderr.contains("worker spawned"), "{stderr}");
    support::assert_nothing_runs_in(dir.path());
}

#[tokio::test]
async fn supervisor_reports_a_childs_progress_in_order_from_start_to_end() {
    use std::sync::{Arc, Mutex};
    use subagent_supervisor::Supervisor;
    use subagent_supervisor::run::{ProgressEvent, ProgressSink};

    let fx = support::Fixture::new("success");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&seen);
    let mut config = fx.config();
    config.progress = Some(ProgressSink::new(move |e| {
        into.lock().unwrap().push(e.clone())
    }));
    let out = fx
        .run_with(
            Supervisor::new(config),
            fx.request(),
            tokio_util::sync::CancellationToken::new(),
        )
        .await;
    assert_eq!(out.code(), None, "{}", out.json);
    let run_id = out.json["details"]["runId"].as_str().unwrap().to_owned();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            ProgressEvent::Started {
                run_id: run_id.clone(),
                agent: "general".into(),
                model: "fixture-model".into(),
            },
            ProgressEvent::Turn {
                run_id: run_id.clone(),
                turn: 1,
            },
            ProgressEvent::ToolStarted {
                run_id: run_id.clone(),
                name: "bash_read".into(),
            },
            ProgressEvent::ToolFinished {
                run_id: run_id.clone(),
                name: "bash_read".into(),
                is_error: false,
            },
            ProgressEvent::Usage {
                run_id: run_id.clone(),
                input_tokens: 10,
                cached_input_tokens: 0,
                output_tokens: 5,
                cost: 0.0,
                cut_by_max_tokens: false,
            },
            ProgressEvent::Ended {
                run_id,
                error: None,
            },
        ]
    );
}
