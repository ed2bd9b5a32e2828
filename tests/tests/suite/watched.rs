//! Running a command that may hang or fill memory when a protection is
//! missing, so that its test fails instead of hanging or taking the
//! machine down: the command's peak RSS (`VmHWM`) is read while it lives,
//! and it is killed past a deadline or past [`KILL_ABOVE`] bytes.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Resident memory past which the command is killed: far above any bound a
/// test asserts, far below what would trouble the machine.
pub const KILL_ABOVE: u64 = 1024 * 1024 * 1024;

/// How the command ended.
#[derive(Debug)]
pub struct Watched {
    /// Its exit status (a kill's signal when it was killed).
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// Its peak resident memory while it was sampled, bytes.
    pub peak_rss: u64,
    /// Why it was killed, when it was.
    pub killed: Option<&'static str>,
}

impl Watched {
    /// The exit code, when it exited.
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }
}

/// Runs `command` (stdin closed, output captured) to its end, or kills it
/// when it outlives `deadline` or its RSS passes [`KILL_ABOVE`].
pub fn run_watched(command: &mut Command, deadline: Duration) -> Watched {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = pipe.read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let mut peak_rss = 0;
    let mut killed = None;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Some(hwm) = subagent_sandbox::peak_rss_since_exec(pid) {
            peak_rss = peak_rss.max(hwm);
        }
        if killed.is_none() {
            if peak_rss > KILL_ABOVE {
                killed = Some("its memory passed 1 GiB");
            } else if started.elapsed() > deadline {
                killed = Some("it outlived its deadline");
            }
            if killed.is_some() {
                let _ = child.kill();
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    Watched {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
        peak_rss,
        killed,
    }
}
