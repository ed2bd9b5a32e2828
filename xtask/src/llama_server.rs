//! A llama-server that xtask starts for a while (the smoke test, the demo):
//! on a free 127.0.0.1 port, from the directory it lives in, waited for
//! until healthy, asked for one completion, and killed and reaped however
//! the caller ends. When it dies on its own, [`explain_exit`] says why in
//! one line a user can act on.
//!
//! `local-model serve` does not come through here: it replaces xtask with
//! the server, so that signals reach the server directly.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// Longest wait for the model to load: the 98 MB model loads in about a
/// second here; the margin covers a loaded CI machine.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// Longest wait for one short completion.
const COMPLETION_TIMEOUT: Duration = Duration::from_secs(60);

/// Lines of the server's log shown when it exits with a status.
const LOG_TAIL_LINES: usize = 10;

/// Context window of the served model, tokens: room for a system prompt,
/// tool schemas and a few turns.
pub const CONTEXT_TOKENS: &str = "8192";
/// Inference threads: one per core of the 2-core machines.
pub const THREADS: &str = "2";

/// A running llama-server, killed and reaped on drop.
#[derive(Debug)]
pub struct RunningServer {
    child: Child,
    program: PathBuf,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

/// The command that serves `model` with `server` on 127.0.0.1:`port`.
///
/// It runs from the server's own directory: the runtime-dispatch build
/// loads its CPU backend from the libraries beside the executable and also
/// from the current directory, so it must never start in a directory
/// someone else can write a library into.
pub fn command(server: &Path, model: &Path, port: u16) -> Command {
    let mut command = Command::new(server);
    command
        .arg("-m")
        .arg(model)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--jinja", "-c", CONTEXT_TOKENS, "-t", THREADS]);
    if let Some(dir) = server.parent() {
        command.current_dir(dir);
    }
    command
}

impl RunningServer {
    /// Starts `server` with `model`, its output written to `log`, and waits
    /// until it answers `/health`.
    pub fn start(server: &Path, model: &Path, log: &Path) -> Result<Self> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let output =
            std::fs::File::create(log).with_context(|| format!("create {}", log.display()))?;
        let child = command(server, model, port)
            .stdin(Stdio::null())
            .stdout(output.try_clone()?)
            .stderr(output)
            .spawn()
            .with_context(|| format!("start {}", server.display()))?;
        let mut running = Self {
            child,
            program: server.to_path_buf(),
            port,
        };
        running.wait_healthy(log)?;
        Ok(running)
    }

    fn wait_healthy(&mut self, log: &Path) -> Result<()> {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait()? {
                let line = explain_exit(&self.program, status);
                if status.signal().is_some() {
                    bail!("{line}");
                }
                // An exit status is the server's own refusal: its last words
                // say what it refused.
                let text = std::fs::read_to_string(log).unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                let tail = lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n");
                bail!("{line}; its last lines:\n{tail}");
            }
            if http(self.port, "GET", "/health", "")
                .is_ok_and(|answer| answer.starts_with("HTTP/1.1 200"))
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!(
                    "llama-server did not answer /health within {STARTUP_TIMEOUT:?}; \
                     is the machine overloaded?"
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The OpenAI-compatible base URL.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Completes `prompt` with at most `tokens` tokens (greedy); returns how
    /// many tokens it predicted. A server that dies meanwhile is explained.
    pub fn complete(&mut self, prompt: &str, tokens: u32) -> Result<u64> {
        let body = serde_json::json!({
            "prompt": prompt,
            "n_predict": tokens,
            "temperature": 0,
        })
        .to_string();
        let answer = http(self.port, "POST", "/completion", &body);
        if let Some(status) = self.child.try_wait()? {
            bail!("{}", explain_exit(&self.program, status));
        }
        let answer = answer.context("llama-server did not answer a completion request")?;
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        if !head.starts_with("HTTP/1.1 200") {
            bail!(
                "llama-server refused a completion: {}",
                head.lines().next().unwrap_or(head)
            );
        }
        let json: serde_json::Value = serde_json::from_str(body)
            .with_context(|| format!("llama-server's completion is not JSON: {body:.200}"))?;
        json["tokens_predicted"]
            .as_u64()
            .filter(|&n| n > 0)
            .with_context(|| format!("llama-server predicted no tokens: {body:.200}"))
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request to 127.0.0.1:`port`; the whole answer.
fn http(port: u16, method: &str, path: &str, body: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(COMPLETION_TIMEOUT))?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer)
}

/// Names the usual fatal signals.
fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        15 => "SIGTERM",
        _ => return None,
    })
}

/// One line on why `program` ended with `status`: the signal, its likely
/// cause and what to do.
pub fn explain_exit(program: &Path, status: ExitStatus) -> String {
    let Some(signal) = status.signal() else {
        return format!(
            "llama-server ({}) exited during startup ({status})",
            program.display()
        );
    };
    let name = signal_name(signal).map_or_else(|| format!("signal {signal}"), str::to_owned);
    let cause = match signal {
        4 => {
            "it ran a CPU instruction this machine does not allow (a binary built for another \
             CPU, or for instructions the kernel leaves disabled); rebuild it here with \
             `cargo xtask local-model install --rebuild`, and if a build made here does this, \
             report it with the output of `lscpu`"
        }
        9 => "something killed it, most often the kernel when memory ran out; check `dmesg`",
        _ => {
            "it crashed; rebuild it with `cargo xtask local-model install --rebuild`, and if a \
             fresh build does the same, report it with its log"
        }
    };
    format!(
        "llama-server ({}) died of {name}: {cause}",
        program.display()
    )
}

#[cfg(test)]
#[path = "llama_server_tests.rs"]
mod tests;
