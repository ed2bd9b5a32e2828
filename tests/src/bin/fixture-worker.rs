//! A worker that speaks the real protocol on fd 3 and misbehaves on request.
//!
//! Usage: `fixture-worker <mode> <marker>`. The marker is only there so tests
//! can find every process of the tree in /proc by its command line; children
//! this fixture starts re-exec it with the same marker.
//!
//! Test code: panics and `unwrap` are fine here, a failure is a test failure.
#![expect(clippy::unwrap_used, clippy::panic)]

use std::io::Write;
use std::os::fd::FromRawFd;
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::time::Duration;
use subagent_tests::{CANCEL_AWAITED_FILE, GO_FILE, HELD_FILE_PREFIX, RELEASE_FILE};

use subagent_protocol::codec;
use subagent_protocol::frame::{DEFAULT_MAX_PAYLOAD, FrameReader, FrameWriter, MaxPayload};
use subagent_protocol::message::OutcomeError;
use subagent_protocol::{
    ErrorCode, FromWorker, Hello, Outcome, SpawnRequest, StopReason, TaskSpec, ToWorker, Usage,
    WorkerEvent,
};

struct Io {
    reader: FrameReader<UnixStream>,
    writer: FrameWriter<UnixStream>,
}

impl Io {
    fn open() -> Self {
        // SAFETY: the supervisor hands us the protocol socket as fd 3.
        let sock = unsafe { UnixStream::from_raw_fd(3) };
        let read = sock.try_clone().unwrap();
        Io {
            reader: FrameReader::new(read, MaxPayload::default()),
            writer: FrameWriter::new(sock, MaxPayload::default()),
        }
    }
    fn send(&mut self, m: FromWorker) {
        self.writer.write(&m).unwrap();
    }
    fn event(&mut self, e: WorkerEvent) {
        self.send(FromWorker::Event(e));
    }
    fn hello(&mut self) {
        self.send(FromWorker::Hello(Hello::current("fixture")));
    }
    fn start(&mut self) -> TaskSpec {
        match self.reader.read::<ToWorker>().unwrap() {
            Some(ToWorker::Start(spec)) => *spec,
            other => panic!("expected Start, got {other:?}"),
        }
    }
    fn handshake(&mut self) -> TaskSpec {
        self.hello();
        self.start()
    }
    fn done(&mut self, text: &str, stop: StopReason, error: Option<(ErrorCode, &str)>) {
        self.send(FromWorker::Done(Box::new(Outcome {
            final_text: text.to_owned(),
            structured_output_json: None,
            usage: Usage {
                input: 10,
                output: 5,
                turns: 1,
                ..Usage::default()
            },
            stop_reason: stop,
            error: error.map(|(code, m)| OutcomeError {
                code,
                message: m.to_owned(),
            }),
            model: "fixture-model".to_owned(),
        })));
    }
    fn raw(&mut self, bytes: &[u8]) {
        // Bypass framing: write straight to the socket.
        // SAFETY: fd 3 is the protocol socket the supervisor passed; the dup
        // is a new descriptor this stream alone owns and closes.
        let mut sock = unsafe { UnixStream::from_raw_fd(libc::dup(3)) };
        sock.write_all(bytes).unwrap();
    }
}

fn sleep_forever() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// Starts `fixture-worker <mode> <marker>` as a child (inherits fds 0-3).
fn spawn_self(mode: &str, marker: &str) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([mode, marker])
        .spawn()
        .unwrap()
}

fn a_turn(io: &mut Io, text: &str) {
    io.event(WorkerEvent::TurnStart { turn: 1 });
    io.event(WorkerEvent::TextDelta {
        text: text.to_owned(),
    });
    io.event(WorkerEvent::ToolCall {
        turn: 1,
        call_id: "call_1".into(),
        name: "bash_read".into(),
        arguments_json: r#"{"path":"README.md"}"#.into(),
    });
    io.event(WorkerEvent::ToolResult {
        call_id: "call_1".into(),
        name: "bash_read".into(),
        output: "# readme".into(),
        is_error: false,
    });
    io.event(WorkerEvent::AssistantMessageEnd {
        turn: 1,
        text: text.to_owned(),
        stop_reason: "stop".into(),
        response_id: Some("fixture-response-1".into()),
    });
    io.event(WorkerEvent::Usage {
        turn: 1,
        usage: Usage {
            input: 10,
            output: 5,
            turns: 1,
            ..Usage::default()
        },
    });
}

/// The API key the supervisor sent in the task (empty when none).
fn api_key(spec: &TaskSpec) -> String {
    spec.provider
        .api_key
        .as_ref()
        .map(|k| k.expose().to_owned())
        .unwrap_or_default()
}

/// The normal run: one turn with a tool call, then Done.
fn succeed(io: &mut Io, spec: &TaskSpec) {
    a_turn(io, "working on it");
    io.done(
        &format!("fixture done: {}", spec.task),
        StopReason::Completed,
        None,
    );
}

/// Done with a JSON report of what the worker was given.
fn echo_spec(io: &mut Io, spec: &TaskSpec) {
    let key = api_key(spec);
    let env_has_key = !key.is_empty() && std::env::vars().any(|(_, v)| v.contains(&key));
    let report = serde_json::json!({
        "tools": spec.tools,
        "depth": spec.depth,
        "maxDepth": spec.max_depth,
        "maxTurns": spec.budget.max_turns,
        "maxCost": spec.budget.max_cost,
        "provider": spec.provider.kind.as_str(),
        "baseUrl": spec.provider.base_url,
        "model": spec.provider.model,
        "hasKey": !key.is_empty(),
        "price": spec.provider.price.map(|p| [p.input, p.output]),
        "outputSchema": spec.output_schema_json,
        "envNames": std::env::vars().map(|(k, _)| k).collect::<Vec<_>>(),
        "envHasKey": env_has_key,
        "cwd": std::env::current_dir().unwrap(),
        "mcpServers": spec.mcp_servers.iter().map(|s| serde_json::json!({
            "name": s.name,
            "command": s.command,
            "args": s.args,
            "env": s.env.iter().map(|v| &v.name).collect::<Vec<_>>(),
            "readOnly": s.read_only,
            "only": s.tools.only,
            "disabled": s.tools.disabled,
            "startupMs": s.startup_timeout_ms,
            "toolMs": s.tool_timeout_ms,
        })).collect::<Vec<_>>(),
    });
    io.done(&report.to_string(), StopReason::Completed, None);
}

/// Asks the supervisor for a nested subagent whether or not the `subagent`
/// tool was offered (a buggy or hostile worker), and reports the reply:
/// `code|is_error|output`.
fn spawn_subagent(io: &mut Io) {
    io.send(FromWorker::SpawnSubagent(Box::new(SpawnRequest {
        call_id: "fixture-call".into(),
        agent: "general".into(),
        task: "fixture:success".into(),
        output_schema_json: None,
        max_turns: None,
        max_cost: None,
        tools: None,
        limits_json: None,
    })));
    let reply = loop {
        match io.reader.read::<ToWorker>().unwrap() {
            Some(ToWorker::SubagentResult(reply)) => break reply,
            Some(ToWorker::Ping) => io.send(FromWorker::Pong),
            // The interpreter may follow Start at any time.
            Some(ToWorker::Python(_)) => {}
            other => panic!("expected SubagentResult, got {other:?}"),
        }
    };
    let code = reply.error_code.map_or("none", |c| c.as_str());
    let text = format!(
        "{code}|{}|{}|{}",
        reply.is_error, reply.call_id, reply.output
    );
    io.done(&text, StopReason::Completed, None);
}

/// Allocates and touches 4 GiB, a MiB at a time, then reports it: a cap
/// must stop it first.
fn hog(io: &mut Io) {
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    for _ in 0..4096 {
        // Touch every page so the memory is really charged.
        blocks.push(vec![1u8; 1 << 20]);
    }
    io.done(
        &format!("allocated {} MiB", blocks.len()),
        StopReason::Completed,
        None,
    );
}

/// `big-frames-N`: N text deltas each as large as the default frame cap
/// allows, then Done. Each frame is written in 1 MiB pieces, so a hundred of
/// these workers cost the machine little while the supervisor must read
/// every maximal frame whole. `held-frames-N` (`held`) holds back the last
/// byte of its first frame: it makes [`HELD_FILE_PREFIX`]`<pid>` in its cwd
/// and waits for [`RELEASE_FILE`] there, so that a test can have every
/// worker's frame in flight at once.
/// `progress-flood-PAIRS-KIB`: PAIRS tool calls and their results, each
/// naming a tool of KIB KiB, with no model behind them: progress enough
/// to fill a server whose client does not read.
fn progress_flood(io: &mut Io, task: &str) {
    let mut numbers = task.rsplit('-').map(|n| n.parse::<usize>().unwrap());
    let kib = numbers.next().unwrap();
    let pairs = numbers.next().unwrap();
    let name = "t".repeat(kib * 1024);
    io.event(WorkerEvent::TurnStart { turn: 1 });
    for n in 0..pairs {
        let call_id = format!("call_{n}");
        io.event(WorkerEvent::ToolCall {
            turn: 1,
            call_id: call_id.clone(),
            name: name.clone(),
            arguments_json: "{}".into(),
        });
        io.event(WorkerEvent::ToolResult {
            call_id,
            name: name.clone(),
            output: "ok".into(),
            is_error: false,
        });
    }
    io.done(
        &format!("sent {pairs} tool calls"),
        StopReason::Completed,
        None,
    );
}

fn big_frames(io: &mut Io, task: &str, held: bool) {
    let count: usize = task.rsplit('-').next().unwrap().parse().unwrap();
    // The message with an empty text ends in the text's varint length 0;
    // a length of 2^16 or more is 0xFC then the u32 (bincode varint).
    let empty = codec::encode(&FromWorker::Event(WorkerEvent::TextDelta {
        text: String::new(),
    }))
    .unwrap();
    assert_eq!(empty.last(), Some(&0));
    let head = &empty[..empty.len() - 1];
    let text_len = DEFAULT_MAX_PAYLOAD as usize - head.len() - 5;
    let mut frame_head = Vec::new();
    frame_head.extend_from_slice(&DEFAULT_MAX_PAYLOAD.to_le_bytes());
    frame_head.extend_from_slice(head);
    frame_head.push(0xFC);
    frame_head.extend_from_slice(&u32::try_from(text_len).unwrap().to_le_bytes());
    let piece = vec![b'y'; 1 << 20];
    for frame in 0..count {
        io.raw(&frame_head);
        let hold = usize::from(held && frame == 0);
        let mut left = text_len - hold;
        while left > 0 {
            let n = left.min(piece.len());
            io.raw(&piece[..n]);
            left -= n;
        }
        if hold == 1 {
            std::fs::write(format!("{HELD_FILE_PREFIX}{}", std::process::id()), b"").unwrap();
            while !std::path::Path::new(RELEASE_FILE).exists() {
                std::thread::sleep(Duration::from_millis(5));
            }
            io.raw(b"y");
        }
    }
    io.done(
        &format!("sent {count} big frames"),
        StopReason::Completed,
        None,
    );
}

/// `gated-frames-N`: waits for [`GO_FILE`] in its cwd, then sends N small
/// text deltas and Done: a well-behaved worker whose frames a test can
/// send at the moment it chooses (once hostile workers hold the frame
/// budget).
fn gated_frames(io: &mut Io, task: &str) {
    let count: usize = task.rsplit('-').next().unwrap().parse().unwrap();
    while !std::path::Path::new(GO_FILE).exists() {
        std::thread::sleep(Duration::from_millis(5));
    }
    for n in 0..count {
        io.event(WorkerEvent::TextDelta {
            text: format!("small frame {n}\n"),
        });
    }
    io.done(
        &format!("sent {count} small frames"),
        StopReason::Completed,
        None,
    );
}

/// Done with a structured output `{"capital":"Paris"}`.
fn structured(io: &mut Io) {
    io.send(FromWorker::Done(Box::new(Outcome {
        final_text: r#"{"capital":"Paris"}"#.into(),
        structured_output_json: Some(r#"{"capital":"Paris"}"#.into()),
        usage: Usage {
            input: 3,
            output: 4,
            turns: 1,
            ..Usage::default()
        },
        stop_reason: StopReason::ReportBack,
        error: None,
        model: "fixture-model".into(),
    })));
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // Without arguments (as started by the `subagent` CLI's --worker), the
    // mode comes from the task text: `fixture:<mode>`.
    let mode = args.get(1).map(String::as_str).unwrap_or("by-task");
    let marker = args.get(2).cloned().unwrap_or_default();
    match mode {
        // -- helpers run as descendants --
        "hold" => sleep_forever(),
        "setsid-hold" => {
            // SAFETY: setsid takes no pointers; its failure is harmless here.
            unsafe { libc::setsid() };
            sleep_forever()
        }
        "daemonize" => {
            // Classic double fork: child forks a setsid grandchild and exits.
            // SAFETY: the fixture is single-threaded here; each child only
            // calls setsid, fork, sleep and _exit.
            if unsafe { libc::fork() } == 0 {
                // SAFETY: no pointers; a failure leaves the session as it is.
                unsafe { libc::setsid() };
                // SAFETY: as the fork above.
                if unsafe { libc::fork() } == 0 {
                    sleep_forever();
                }
                // SAFETY: _exit ends this child without running anything.
                unsafe { libc::_exit(0) };
            }
            std::process::exit(0);
        }
        _ => {}
    }

    let mut io = Io::open();
    match mode {
        "by-task" => {
            let spec = io.handshake();
            match spec.task.strip_prefix("fixture:").unwrap_or("success") {
                "sleep" => {
                    io.event(WorkerEvent::TurnStart { turn: 1 });
                    sleep_forever()
                }
                // A clean failure the CLI can pick by task text (batch and
                // chain tests need one task to fail without waiting).
                "fail" => io.done(
                    "fixture failed on purpose",
                    StopReason::Error,
                    Some((ErrorCode::SubagentFailed, "fixture failed on purpose")),
                ),
                "echo-spec" => echo_spec(&mut io, &spec),
                "structured" => structured(&mut io),
                "spawn-subagent" => spawn_subagent(&mut io),
                // A 4 KiB answer: a job whose status is worth flooding.
                "big-answer" => io.done(
                    &"all work and no play\n".repeat(200),
                    StopReason::Completed,
                    None,
                ),
                "memory" => hog(&mut io),
                task if task.starts_with("big-frames-") => big_frames(&mut io, task, false),
                task if task.starts_with("held-frames-") => big_frames(&mut io, task, true),
                task if task.starts_with("gated-frames-") => gated_frames(&mut io, task),
                task if task.starts_with("progress-flood-") => progress_flood(&mut io, task),
                _ => succeed(&mut io, &spec),
            }
        }
        "success" => {
            let spec = io.handshake();
            succeed(&mut io, &spec);
        }
        "echo-spec" => {
            let spec = io.handshake();
            echo_spec(&mut io, &spec);
        }
        "structured" => {
            io.handshake();
            structured(&mut io);
        }
        "budget" => {
            io.handshake();
            a_turn(&mut io, "partial answer");
            io.done(
                "partial answer",
                StopReason::MaxTurns,
                Some((
                    ErrorCode::SubagentBudgetExceeded,
                    "turn budget of 1 exhausted",
                )),
            );
        }
        "big-output" => {
            io.handshake();
            io.done(
                &"all work and no play\n".repeat(20_000),
                StopReason::Completed,
                None,
            );
        }
        "secrets" => {
            let spec = io.handshake();
            let key = api_key(&spec);
            eprintln!("debug: using key {key} and Authorization: Bearer abcdefghijkl123");
            io.event(WorkerEvent::Log {
                level: subagent_protocol::message::LogLevel::Info,
                message: format!("key={key}"),
            });
            io.done(
                &format!(
                    "found ghp_abcdefghijklmnopqrstuvwxyz0123456789 and {key} in /home/someone/.env"
                ),
                StopReason::Completed,
                None,
            );
        }
        "sleep" => {
            io.handshake();
            io.event(WorkerEvent::TurnStart { turn: 1 });
            sleep_forever()
        }
        "ignore-term" => {
            // SAFETY: SIG_IGN installs no handler code.
            unsafe { libc::signal(libc::SIGTERM, libc::SIG_IGN) };
            io.handshake();
            io.event(WorkerEvent::TurnStart { turn: 1 });
            sleep_forever()
        }
        "cancel-ok" => {
            io.handshake();
            io.event(WorkerEvent::TurnStart { turn: 1 });
            io.event(WorkerEvent::TextDelta {
                text: "half an answ".into(),
            });
            // Tells the test (through the workspace, the worker's cwd) that
            // the partial answer is out and a cancel is awaited, so the test
            // cancels on this event instead of after a guessed delay.
            let _ = std::fs::write(CANCEL_AWAITED_FILE, b"");
            loop {
                match io.reader.read::<ToWorker>().unwrap() {
                    Some(ToWorker::Cancel { .. }) => {
                        io.done(
                            "half an answ",
                            StopReason::Cancelled,
                            Some((ErrorCode::SubagentCancelled, "cancelled")),
                        );
                        return;
                    }
                    Some(ToWorker::Ping) => io.send(FromWorker::Pong),
                    Some(_) => {}
                    None => std::process::exit(3),
                }
            }
        }
        "setsid-grandchild" => {
            io.handshake();
            // Deliberately never waited for: the point is to leave it behind.
            #[expect(clippy::zombie_processes, reason = "the leak is the test")]
            let _child = spawn_self("setsid-hold", &marker);
            io.done(
                "done, but a grandchild holds the pipes",
                StopReason::Completed,
                None,
            );
        }
        "daemon" => {
            io.handshake();
            let mut child = spawn_self("daemonize", &marker);
            child.wait().unwrap();
            io.done(
                "done, but a daemon was left behind",
                StopReason::Completed,
                None,
            );
        }
        "flood-stdout" | "flood-stderr" => {
            io.handshake();
            let chunk = vec![b'x'; 1 << 20];
            for _ in 0..1024 {
                let r = if mode == "flood-stdout" {
                    std::io::stdout().write_all(&chunk)
                } else {
                    std::io::stderr().write_all(&chunk)
                };
                if r.is_err() {
                    break;
                }
            }
            io.done("flooded", StopReason::Completed, None);
        }
        "flood-protocol" => {
            io.handshake();
            let text = "y".repeat(1 << 20);
            for _ in 0..1024 {
                io.event(WorkerEvent::TextDelta { text: text.clone() });
            }
            io.done("flooded", StopReason::Completed, None);
        }
        "oversized-frame" => {
            io.handshake();
            io.raw(&(32u32 << 20).to_le_bytes());
            sleep_forever()
        }
        "garbage" => {
            io.raw(b"\x05\x00\x00\x00\xff\xff\xff\xff\xffGARBAGE GARBAGE");
            sleep_forever()
        }
        "half-frame" => {
            io.handshake();
            let mut bytes = 100u32.to_le_bytes().to_vec();
            bytes.extend_from_slice(&[0u8; 50]);
            io.raw(&bytes);
            std::process::exit(0);
        }
        "no-done" => {
            io.handshake();
            io.event(WorkerEvent::TurnStart { turn: 1 });
            io.event(WorkerEvent::TextDelta {
                text: "I was about to say".into(),
            });
            eprintln!("fixture: exiting without Done");
            std::process::exit(7);
        }
        "abort" => {
            io.handshake();
            std::process::abort();
        }
        "segfault" => {
            io.handshake();
            // Rust's own SIGSEGV handler (stack-overflow detection) would
            // swallow a raised signal; restore the default action first.
            // SAFETY: SIG_DFL installs no handler code; raise takes no
            // pointers.
            unsafe {
                libc::signal(libc::SIGSEGV, libc::SIG_DFL);
                libc::raise(libc::SIGSEGV);
            }
            sleep_forever()
        }
        "memory" => {
            io.handshake();
            hog(&mut io);
        }
        "fork-bomb" => {
            io.handshake();
            let mut started = 0u32;
            for _ in 0..100_000 {
                // SAFETY: each child only sleeps; the parent counts.
                match unsafe { libc::fork() } {
                    0 => sleep_forever(),
                    -1 => break,
                    _ => started += 1,
                }
            }
            eprintln!("fixture: fork failed after {started} children");
            std::process::exit(1);
        }
        "big-file" => {
            io.handshake();
            let path = std::env::temp_dir().join(format!("fixture-big-{}", std::process::id()));
            let mut f = std::fs::File::create(&path).unwrap();
            let chunk = vec![0u8; 1 << 20];
            for _ in 0..64 {
                if let Err(e) = f.write_all(&chunk) {
                    let _ = std::fs::remove_file(&path);
                    eprintln!("fixture: write failed: {e}");
                    std::process::exit(4);
                }
            }
            let _ = std::fs::remove_file(&path);
            io.done("wrote 64 MiB", StopReason::Completed, None);
        }
        "bad-version" => {
            io.send(FromWorker::Hello(Hello {
                protocol_version: 999,
                worker_version: "9.9.9".into(),
                pid: std::process::id(),
            }));
            sleep_forever()
        }
        "deaf" => {
            // Says Hello, then never reads fd 3: a Start larger than the
            // socket buffer can never be written whole.
            io.hello();
            sleep_forever()
        }
        "done-then-linger" => {
            io.handshake();
            io.done("done, lingering", StopReason::Completed, None);
            // A line after Done: once it is in the session file, the
            // supervisor has read Done (frames are handled in order).
            io.event(WorkerEvent::Log {
                level: subagent_protocol::message::LogLevel::Info,
                message: "lingering until Cancel".into(),
            });
            loop {
                match io.reader.read::<ToWorker>() {
                    Ok(Some(ToWorker::Cancel { .. })) | Ok(None) | Err(_) => std::process::exit(0),
                    Ok(Some(_)) => {}
                }
            }
        }
        "one-big-frame" => {
            io.handshake();
            io.event(WorkerEvent::ToolResult {
                call_id: "call_1".into(),
                name: "bash_read".into(),
                output: "z".repeat(12 << 20),
                is_error: false,
            });
            // Reached only when the supervisor read the whole frame.
            std::fs::write("frame-sent", b"the whole frame was read").unwrap();
            sleep_forever()
        }
        "silent" => sleep_forever(),
        other => panic!("unknown fixture mode {other}"),
    }
}
