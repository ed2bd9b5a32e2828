//! `subagent ps` against `serve --stdio`: a job queued for the server's
//! one slot shows as `queued`; files planted in `.live/` beside a live job
//! (forged, copied, a finished job's record replayed under a lock of its
//! own while the server lives, a FIFO, a link, a gigabyte file) are never
//! listed. Helpers are [`super::ps`]'s.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

use super::ps::{POLL, WAIT, ps_json, ps_table, state_of, wait_for_ps};
use super::support::*;

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
