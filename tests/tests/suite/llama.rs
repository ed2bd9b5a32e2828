//! A real llama-server on 127.0.0.1 for end-to-end tests.
//!
//! The binary and model come from `cargo xtask local-model` (which
//! `cargo xtask ci` runs first): `SUBAGENT_LLAMA_SERVER` and
//! `SUBAGENT_LLAMA_MODEL` name them. The server is started per test, waited
//! for by polling `/health`, and killed (and checked dead) on drop.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Longest wait for the model to load (60 s): the 98 MB model loads in about
/// a second here; the margin covers a loaded CI machine.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// The signal of an illegal instruction.
const SIGILL: i32 = 4;

pub struct LlamaServer {
    child: Child,
    pub port: u16,
}

fn required_path(var: &str) -> PathBuf {
    let value = std::env::var_os(var).unwrap_or_else(|| {
        panic!("{var} is not set: run `cargo xtask local-model` and export the paths it prints, or run the suite with `cargo xtask ci`")
    });
    let path = PathBuf::from(value);
    assert!(
        path.exists(),
        "{var}={} does not exist; run `cargo xtask local-model`",
        path.display()
    );
    path
}

impl LlamaServer {
    /// A started server, or `None` after one printed line saying what to run
    /// when the local model's paths are not set. Under `CI=true` a missing
    /// model fails the test instead: CI must never pass by skipping.
    pub fn start_or_skip(test: &str) -> Option<Self> {
        let missing: Vec<&str> = ["SUBAGENT_LLAMA_SERVER", "SUBAGENT_LLAMA_MODEL"]
            .into_iter()
            .filter(|var| std::env::var_os(var).is_none())
            .collect();
        if missing.is_empty() {
            return Some(Self::start());
        }
        let why = format!(
            "{} not set: run `cargo xtask ci`, or `cargo xtask local-model` and export what it prints",
            missing.join(" and ")
        );
        subagent_test_support::skip::cannot_run(test, &why);
        None
    }

    pub fn start() -> Self {
        Self::start_under(&[], &[], Stdio::null(), STARTUP_TIMEOUT)
    }

    /// Started as the last argument of `wrapper` (an emulator, say; empty:
    /// directly) with `extra` arguments, its output to `output`, waited for
    /// up to `startup`.
    pub fn start_under(wrapper: &[&str], extra: &[&str], output: Stdio, startup: Duration) -> Self {
        // Absolute: it runs from its own directory (below).
        let server = std::fs::canonicalize(required_path("SUBAGENT_LLAMA_SERVER")).unwrap();
        let model = required_path("SUBAGENT_LLAMA_MODEL");
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // From its own directory: the CPU-dispatch build also loads backend
        // libraries from the current directory.
        let dir = server.parent().map(PathBuf::from).unwrap_or_default();
        let mut command = match wrapper.split_first() {
            Some((program, args)) => {
                let mut command = Command::new(program);
                command.args(args).arg(&server);
                command
            }
            None => Command::new(&server),
        };
        let child = command
            .current_dir(dir)
            .args(["-m"])
            .arg(model)
            .args([
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--jinja",
                "-c",
                "8192",
                "-t",
                "2",
                "--no-webui",
            ])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(output)
            .spawn()
            .expect("start llama-server");
        let mut server = Self { child, port };
        server.wait_healthy(startup);
        server
    }

    /// Completes `prompt` with up to `tokens` tokens, greedily: the
    /// server's answer (`content`, `tokens_predicted`, ...).
    pub fn complete(&self, prompt: &str, tokens: u32) -> serde_json::Value {
        let body = serde_json::json!({"prompt": prompt, "n_predict": tokens, "temperature": 0})
            .to_string();
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            stream,
            "POST /completion HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 200"), "{answer}");
        serde_json::from_str(body).unwrap()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn wait_healthy(&mut self, startup: Duration) {
        let deadline = Instant::now() + startup;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let hint = if status.signal() == Some(SIGILL) {
                    ": a CPU instruction this machine does not allow; rebuild the local model \
                     here with `cargo xtask local-model install --rebuild`"
                } else {
                    ""
                };
                panic!("llama-server exited during startup: {status}{hint}");
            }
            if health_ok(self.port) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "llama-server not healthy within {startup:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn health_ok(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut buf = String::new();
    let _ = s.read_to_string(&mut buf);
    buf.starts_with("HTTP/1.1 200")
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let pid = self.child.id();
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "llama-server {pid} survived"
        );
    }
}
