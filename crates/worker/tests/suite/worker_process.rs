//! The real `subagent-worker` binary on a socketpair as fd 3: handshake,
//! a run that fails to reach its provider, cancel, and the rule that a
//! vanished supervisor makes the worker exit at once.

use std::io::Read;
use std::net::TcpListener;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use subagent_protocol::frame::{FrameReader, FrameWriter};
use subagent_protocol::message::Outcome;
use subagent_protocol::{
    ErrorCode, FromWorker, MaxPayload, PROTOCOL_VERSION, StopReason, TaskSpec, ToWorker,
    WorkerEvent,
};
use subagent_worker::exit_code;

use super::loop_support::spec;
use crate::support::binaries::binary;

/// Longest wait for any frame: the connect-error run retries with backoff
/// (about 1.5 s in total by default), far below this.
const FRAME_DEADLINE: Duration = Duration::from_secs(30);

/// How soon the worker must be gone once its supervisor is: "at once",
/// with room for a loaded CI machine.
const EXIT_DEADLINE: Duration = Duration::from_secs(5);

struct Worker {
    child: Child,
    reader: FrameReader<UnixStream>,
    writer: FrameWriter<UnixStream>,
}

impl Worker {
    /// Starts the worker with one end of a socketpair as its fd 3. The
    /// shell only moves the inherited stdin to fd 3 and `exec`s the worker,
    /// so the child process *is* the worker.
    fn spawn() -> Worker {
        Self::spawn_with(|_| {})
    }

    /// [`Self::spawn`] with `adjust` applied to the command first.
    fn spawn_with(adjust: impl FnOnce(&mut Command)) -> Worker {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let mut command = Command::new("/bin/sh");
        adjust(&mut command);
        let child = command
            .arg("-c")
            .arg(r#"exec "$0" 3<&0 </dev/null"#)
            .arg(binary("subagent-worker"))
            .env("SUBAGENT_PROTOCOL_FD", "3")
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        ours.set_read_timeout(Some(FRAME_DEADLINE)).unwrap();
        let writer = FrameWriter::new(ours.try_clone().unwrap(), MaxPayload::default());
        Worker {
            child,
            reader: FrameReader::new(ours, MaxPayload::default()),
            writer,
        }
    }

    fn read(&mut self) -> FromWorker {
        self.reader
            .read::<FromWorker>()
            .expect("a frame before the deadline")
            .expect("a frame, not end of stream")
    }

    fn send(&mut self, message: &ToWorker) {
        self.writer.write(message).unwrap();
    }

    fn handshake(&mut self) {
        match self.read() {
            FromWorker::Hello(hello) => {
                assert_eq!(hello.protocol_version, PROTOCOL_VERSION);
                assert_eq!(hello.pid, self.child.id());
            }
            other => panic!("expected Hello, got {other:?}"),
        }
    }

    /// Reads until `Done`, returning it and the events before it.
    fn read_until_done(&mut self) -> (Outcome, Vec<WorkerEvent>) {
        let mut events = Vec::new();
        loop {
            match self.read() {
                FromWorker::Event(event) => events.push(event),
                FromWorker::Done(outcome) => return (*outcome, events),
                other => panic!("unexpected frame {other:?}"),
            }
        }
    }

    /// Reads until `TurnStart`.
    fn read_until_turn_start(&mut self) {
        loop {
            if let FromWorker::Event(WorkerEvent::TurnStart { .. }) = self.read() {
                return;
            }
        }
    }

    /// Closes our end of the socket: the supervisor is gone.
    fn hang_up(self) -> Child {
        drop(self.reader);
        drop(self.writer);
        self.child
    }
}

/// Waits for `child` to exit, polling until `deadline`; kills it and fails
/// the test past the deadline. Asserts the process no longer exists and
/// wrote nothing to stdout.
fn wait_gone(mut child: Child, deadline: Duration) -> Exited {
    let pid = child.id();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the worker did not exit within {deadline:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = started.elapsed();
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "pid {pid} still exists"
    );
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert_eq!(stdout, "", "the worker printed to stdout");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    Exited {
        status,
        took,
        stderr,
    }
}

/// How the worker ended.
struct Exited {
    status: ExitStatus,
    took: Duration,
    stderr: String,
}

impl Exited {
    fn assert_code(&self, code: u8) {
        assert_eq!(
            self.status.code(),
            Some(i32::from(code)),
            "worker stderr: {}",
            self.stderr
        );
    }
}

/// A spec whose provider is an `openai-chat` endpoint at `port`.
fn spec_for_port(port: u16) -> TaskSpec {
    let mut spec = spec();
    spec.tools = Vec::new();
    spec.provider.base_url = format!("http://127.0.0.1:{port}/v1");
    spec
}

/// A loopback port nobody listens on.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn a_run_against_a_closed_port_ends_with_done_and_a_readable_connect_error() {
    let mut worker = Worker::spawn();
    worker.handshake();
    let port = closed_port();
    worker.send(&ToWorker::Start(Box::new(spec_for_port(port))));
    let (outcome, events) = worker.read_until_done();
    assert_eq!(events.first(), Some(&WorkerEvent::TurnStart { turn: 1 }));
    assert_eq!(outcome.stop_reason, StopReason::Error);
    let error = outcome.error.expect("an error");
    assert_eq!(error.code, ErrorCode::SubagentFailed);
    assert!(
        error.message.contains("could not reach the provider")
            && error.message.contains(&format!("127.0.0.1:{port}")),
        "{}",
        error.message
    );
    wait_gone(worker.hang_up(), EXIT_DEADLINE).assert_code(exit_code::SUCCESS);
}

#[test]
fn ping_is_answered_and_cancel_ends_a_blocked_run_with_done_cancelled() {
    // Accepts connections in the kernel backlog but never answers: the
    // model turn blocks until cancelled. Dropped (closed) at the end.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut worker = Worker::spawn();
    worker.handshake();
    worker.send(&ToWorker::Ping);
    assert_eq!(worker.read(), FromWorker::Pong);
    worker.send(&ToWorker::Start(Box::new(spec_for_port(
        silent.local_addr().unwrap().port(),
    ))));
    worker.read_until_turn_start();
    worker.send(&ToWorker::Cancel {
        reason: "test".to_owned(),
    });
    let (outcome, _) = worker.read_until_done();
    assert_eq!(outcome.stop_reason, StopReason::Cancelled);
    assert_eq!(
        outcome.error.map(|e| e.code),
        Some(ErrorCode::SubagentCancelled)
    );
    wait_gone(worker.hang_up(), EXIT_DEADLINE).assert_code(exit_code::SUCCESS);
    drop(silent);
}

#[test]
fn closing_the_socket_mid_run_makes_the_worker_exit_at_once() {
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut worker = Worker::spawn();
    worker.handshake();
    worker.send(&ToWorker::Start(Box::new(spec_for_port(
        silent.local_addr().unwrap().port(),
    ))));
    worker.read_until_turn_start();
    let exited = wait_gone(worker.hang_up(), EXIT_DEADLINE);
    exited.assert_code(exit_code::SUPERVISOR_GONE);
    assert!(exited.took < EXIT_DEADLINE, "took {:?}", exited.took);
    assert!(
        exited.stderr.contains("the supervisor is gone"),
        "{}",
        exited.stderr
    );
    drop(silent);
}

#[test]
fn closing_the_socket_before_start_makes_the_worker_exit_at_once() {
    let mut worker = Worker::spawn();
    worker.handshake();
    wait_gone(worker.hang_up(), EXIT_DEADLINE).assert_code(exit_code::SUPERVISOR_GONE);
}

/// A uid and gid no file or process of the test belongs to.
const NOBODY: u32 = 65534;

#[test]
fn another_process_of_the_workers_user_cannot_read_its_memory_or_environment() {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::process::CommandExt;
    // /proc/self belongs to this process's effective uid.
    if std::fs::metadata("/proc/self").unwrap().uid() != 0 {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs as root: this test must run there"
        );
        eprintln!("skipping: needs root to run the worker and a reader as another user");
        return;
    }
    // Both run as the same unprivileged user, as a tool process outside
    // its sandbox, or anything else the user runs, would.
    let mut worker = Worker::spawn_with(|c| {
        c.uid(NOBODY).gid(NOBODY);
    });
    worker.handshake();
    let pid = worker.child.id();
    for file in ["environ", "mem"] {
        let read = Command::new("/bin/cat")
            .arg(format!("/proc/{pid}/{file}"))
            .uid(NOBODY)
            .gid(NOBODY)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&read.stderr);
        assert!(
            !read.status.success() && stderr.contains("Permission denied"),
            "/proc/{pid}/{file} of the worker was readable by its own user: {stderr}"
        );
    }
    let exited = wait_gone(worker.hang_up(), EXIT_DEADLINE);
    exited.assert_code(exit_code::SUPERVISOR_GONE);
}
