//! Both servers against hostile clients, through the real binary and raw
//! pipes: a line that is not UTF-8 or not JSON, a 100 MiB line without a
//! newline, and 20,000 requests from a client that does not read its
//! stdout until the server has stopped reading. The server must stay
//! alive, answer what follows, and keep its memory bounded.
//!
//! The bound: the server's peak RSS (VmHWM) may pass its RSS before the
//! hostile input by at most [`RSS_GROWTH_BOUND`] (64 MiB): the 16 MiB line
//! cap, the 8 MiB queue of unread answers, 16 MiB of requests in flight
//! and allocator slack. Without the bounds the same input grows the server
//! by its size (100 MiB for the long line; one answer per request for the
//! flood: 20,000 statuses of a 4 KiB answer, or 20,000 MCP tool lists,
//! are well over 100 MiB).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::support::{FIXTURE, assert_nothing_runs_in, binary, wait_until};

/// How far the server's peak RSS may pass its RSS before the hostile input.
const RSS_GROWTH_BOUND: u64 = 64 * 1024 * 1024;

/// Requests of the flood.
const FLOOD: u64 = 20_000;

/// Longest wait for the server to react (60 s: a debug build on a loaded
/// 2-core machine answering 20,000 requests).
const WAIT: Duration = Duration::from_secs(60);

/// What the servers log when they stop reading for an unread stdout.
const PAUSED: &str = "stdout is not being read";

/// One server process and the client's ends of its pipes.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    /// `subagent serve <mode>` with the fixture worker, logging at info.
    fn start(mode: &str, dir: &Path) -> Self {
        let workspace = dir.join("workspace");
        std::fs::create_dir_all(&workspace).unwrap();
        let mut child = Command::new(binary("subagent"))
            .args([
                "serve",
                mode,
                "--worker",
                FIXTURE,
                "--model",
                "fixture-model",
            ])
            .args(["--base-url", "http://127.0.0.1:9/v1"])
            .arg("--sessions-dir")
            .arg(dir.join("sessions"))
            .arg("--workspace")
            .arg(&workspace)
            .current_dir(dir)
            .env("RUST_LOG", "subagent=info")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let into = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                into.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Self {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            stderr,
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, message: &Value) {
        self.send(format!("{message}\n").as_bytes());
    }

    /// The next line on stdout that satisfies `wanted`; others are skipped.
    fn read_until(&mut self, what: &str, mut wanted: impl FnMut(&Value) -> bool) -> Value {
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(
                n > 0,
                "stdout closed before {what}; stderr:\n{}",
                self.log()
            );
            let message: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if wanted(&message) {
                return message;
            }
        }
    }

    fn answer(&mut self, id: u64) -> Value {
        self.read_until(&format!("the answer to {id}"), |m| m["id"] == id)
    }

    fn log(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// VmRSS and VmHWM of the server, bytes.
    fn memory(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .unwrap()
                * 1024
        };
        (field("VmRSS:"), field("VmHWM:"))
    }

    /// Sends a line of `len` bytes with no newline in it, then the newline.
    fn send_long_line(&mut self, len: usize) {
        let chunk = vec![b'x'; 1024 * 1024];
        for _ in 0..len / chunk.len() {
            self.send(&chunk);
        }
        self.send(b"\n");
    }

    /// Writes `FLOOD` requests made by `request` from a thread and does not
    /// read stdout until the server says it stopped reading; fails as soon
    /// as the server's peak passes `rss_before` by the bound, or when the
    /// writer got every request through (the server read them all while
    /// nobody read its answers).
    fn flood_unread(&mut self, rss_before: u64, request: impl Fn(u64) -> Value) {
        let mut stdin = self.stdin.take().unwrap();
        let lines: Vec<u8> = (0..FLOOD)
            .flat_map(|i| format!("{}\n", request(i)).into_bytes())
            .collect();
        let written = Arc::new(AtomicBool::new(false));
        let done = Arc::clone(&written);
        let writer = std::thread::spawn(move || {
            stdin.write_all(&lines).unwrap();
            stdin.flush().unwrap();
            done.store(true, Ordering::SeqCst);
            stdin
        });
        let deadline = Instant::now() + WAIT;
        loop {
            let (_, peak) = self.memory();
            assert!(
                peak < rss_before + RSS_GROWTH_BOUND,
                "the server grew by {} MiB with its answers unread",
                (peak - rss_before) >> 20
            );
            if self.log().contains(PAUSED) {
                break;
            }
            assert!(
                !written.load(Ordering::SeqCst),
                "the server read all {FLOOD} requests while nobody read its answers"
            );
            assert!(Instant::now() < deadline, "no backpressure within {WAIT:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            !written.load(Ordering::SeqCst),
            "the writer was not held back"
        );
        // Now read: every request is answered, and the peak stays bounded.
        let mut answered = std::collections::HashSet::new();
        let mut line = String::new();
        while (answered.len() as u64) < FLOOD {
            line.clear();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "stdout closed in the flood; stderr:\n{}", self.log());
            // Parsing 20,000 whole answers would make the test slow: the id
            // comes first in both protocols' answers (errors start with it
            // in neither), notifications have none.
            let head = &line[..line.len().min(64)];
            assert!(!head.contains("\"error\""), "{head}");
            if let Some(id) = leading_id(head)
                && (1_000..1_000 + FLOOD).contains(&id)
            {
                answered.insert(id);
            }
        }
        self.stdin = Some(writer.join().unwrap());
        let (_, peak) = self.memory();
        eprintln!(
            "serve_hostile: {FLOOD} unread requests: peak RSS {} MiB over {} MiB before",
            peak.saturating_sub(rss_before) >> 20,
            rss_before >> 20
        );
        assert!(
            peak < rss_before + RSS_GROWTH_BOUND,
            "the server grew by {} MiB",
            (peak - rss_before) >> 20
        );
    }

    /// Closes stdin and waits for a clean exit.
    fn close(mut self, dir: &Path) {
        drop(self.stdin.take());
        let deadline = Instant::now() + WAIT;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "{status}; stderr:\n{}", self.log());
        assert_nothing_runs_in(dir);
    }
}

/// The number after the first `"id":` in `head`.
fn leading_id(head: &str) -> Option<u64> {
    let rest = &head[head.find("\"id\":")? + 5..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn serve_stdio_answers_bad_lines_skips_a_huge_one_and_holds_back_an_unread_flood() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start("--stdio", dir.path());
    server.request(&json!({"id": 1, "method": "spawn", "params": {"task": "fixture:big-answer"}}));
    let job = server.answer(1)["result"]["jobId"]
        .as_str()
        .unwrap()
        .to_owned();

    server.send(b"\xff\xfe{\"id\": 2}\n");
    let bad = server.read_until("the non-UTF-8 line's error", |m| {
        m["id"].is_null() && m.get("error").is_some()
    });
    assert_eq!(bad["error"]["code"], "PARSE_ERROR", "{bad}");
    assert!(bad["error"]["message"].as_str().unwrap().contains("UTF-8"));
    server.send(b"not json\n");
    let bad = server.read_until("the non-JSON line's error", |m| {
        m["id"].is_null() && m.get("error").is_some()
    });
    assert_eq!(bad["error"]["code"], "PARSE_ERROR", "{bad}");
    server.request(&json!({"id": 3, "method": "status", "params": {"jobId": job}}));
    assert_eq!(server.answer(3)["result"]["state"], "completed");

    let (rss_before, _) = server.memory();
    server.send_long_line(100 * 1024 * 1024);
    server.request(&json!({"id": 4, "method": "list"}));
    let bad = server.read_until("the long line's error", |m| {
        m["id"].is_null() && m.get("error").is_some()
    });
    let (_, peak) = server.memory();
    eprintln!(
        "serve_hostile: a 100 MiB line: peak RSS {} MiB over {} MiB before",
        peak.saturating_sub(rss_before) >> 20,
        rss_before >> 20
    );
    assert!(
        peak < rss_before + RSS_GROWTH_BOUND,
        "a 100 MiB line grew the server by {} MiB",
        (peak - rss_before) >> 20
    );
    assert_eq!(bad["error"]["code"], "INVALID_REQUEST", "{bad}");
    assert!(bad["error"]["message"].as_str().unwrap().contains("16 MiB"));
    assert!(server.answer(4)["result"]["jobs"].is_array());

    let (rss_before, _) = server.memory();
    server.flood_unread(
        rss_before,
        |i| json!({"id": 1_000 + i, "method": "status", "params": {"jobId": job}}),
    );
    server.request(&json!({"id": 5, "method": "list"}));
    assert!(server.answer(5)["result"]["jobs"].is_array());
    server.close(dir.path());
}

#[test]
fn serve_mcp_skips_bad_and_huge_lines_and_holds_back_an_unread_flood() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start("--mcp", dir.path());
    server.request(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "hostile", "version": "0"}}}),
    );
    assert!(server.answer(1)["result"]["serverInfo"].is_object());
    server.request(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    // Not UTF-8, not JSON: skipped (as the official MCP SDKs do), and the
    // server goes on.
    server.send(b"\xff\xfe{\"jsonrpc\": \"2.0\"}\n");
    server.send(b"not json\n");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    server.request(&list);
    assert!(server.answer(2)["result"]["tools"].is_array());

    let (rss_before, _) = server.memory();
    server.send_long_line(100 * 1024 * 1024);
    server.request(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    assert!(server.answer(3)["result"]["tools"].is_array());
    let (_, peak) = server.memory();
    assert!(
        peak < rss_before + RSS_GROWTH_BOUND,
        "a 100 MiB line grew the server by {} MiB",
        (peak - rss_before) >> 20
    );

    let (rss_before, _) = server.memory();
    server.flood_unread(
        rss_before,
        |i| json!({"jsonrpc": "2.0", "id": 1_000 + i, "method": "tools/list"}),
    );
    server.request(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}));
    assert!(server.answer(4)["result"]["tools"].is_array());
    server.close(dir.path());
}

/// How many children's session files under `sessions` (not the server's
/// own) have ended: their last line is a lifecycle ending.
fn runs_ended(sessions: &Path) -> usize {
    use std::io::{Seek, SeekFrom};
    super::support::jsonl_files(sessions)
        .into_iter()
        .filter(|f| !f.starts_with(sessions.join("serve")))
        .filter(|file| {
            let Ok(mut f) = std::fs::File::open(file) else {
                return false;
            };
            let len = f.metadata().map_or(0, |m| m.len());
            let _ = f.seek(SeekFrom::Start(len.saturating_sub(4096)));
            let mut tail = String::new();
            let _ = f.read_to_string(&mut tail);
            tail.lines()
                .last()
                .is_some_and(|l| l.contains("\"subagent:complete\""))
        })
        .count()
}

/// Issue 32: a client that asked for progress and never reads kept every
/// progress event of its call queued in the server (315 MiB). Here a
/// parallel call of four children each sends 48,000 tool events naming a
/// 1 KiB tool (47 MiB each, under a worker's 64 MiB of protocol; 188 MiB
/// of progress) while the client reads nothing: the server's peak stays
/// under the bound, and once the client reads, a notification says how
/// many messages were dropped and the answer comes. (Without a progress
/// token the same call grows the server by about 15 MiB.)
#[test]
fn serve_mcp_drops_the_oldest_progress_of_a_client_that_does_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start("--mcp", dir.path());
    server.request(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "unread", "version": "0"}}}),
    );
    assert!(server.answer(1)["result"]["serverInfo"].is_object());
    server.request(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let (rss_before, _) = server.memory();
    server.request(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "subagent", "arguments": {
            "tasks": vec!["fixture:progress-flood-24000-1"; 4], "mode": "parallel"},
        "_meta": {"progressToken": "unread"}}}),
    );
    // Nothing is read until the run has sent all its events.
    let sessions = dir.path().join("sessions");
    let deadline = Instant::now() + WAIT;
    loop {
        let (_, peak) = server.memory();
        assert!(
            peak < rss_before + RSS_GROWTH_BOUND,
            "the server grew by {} MiB with its progress unread",
            (peak - rss_before) >> 20
        );
        if runs_ended(&sessions) == 4 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the runs did not end within {WAIT:?}; log:\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (_, peak) = server.memory();
    eprintln!(
        "serve_hostile: 188 MiB of unread progress: peak RSS {} MiB over {} MiB before",
        peak.saturating_sub(rss_before) >> 20,
        rss_before >> 20
    );
    // Now read: the notifications that were kept, one of them saying how
    // many were dropped, then the answer.
    let mut dropped_said = None;
    let mut notifications = 0;
    let answer = server.read_until("the call's answer", |m| {
        if m["method"] == "notifications/progress" {
            notifications += 1;
            let message = m["params"]["message"].as_str().unwrap_or_default();
            if message.contains("earlier progress messages dropped") && dropped_said.is_none() {
                dropped_said = Some(message.chars().take(120).collect::<String>());
            }
        }
        m["id"] == 2
    });
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(
        dropped_said.is_some(),
        "no notification said progress was dropped ({notifications} read)"
    );
    // The 256 kept, what the pipe took before the server blocked (64 KiB
    // of ~1 KiB messages), the one in flight.
    assert!(notifications <= 400, "{notifications} notifications kept");
    // The forwarder logs the drop once the call's progress ends, which may
    // be after the answer went out.
    wait_until("the server's log to say progress was dropped", || {
        server
            .log()
            .contains("progress messages of a call were dropped")
    });
    assert!(
        server
            .log()
            .contains("progress messages of a call were dropped"),
        "{}",
        server.log()
    );
    server.close(dir.path());
}
