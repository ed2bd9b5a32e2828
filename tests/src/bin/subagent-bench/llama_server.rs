//! The real llama-server on 127.0.0.1 for the end-to-end comparisons: the
//! binary and model `cargo xtask bench` installed (named by
//! `SUBAGENT_LLAMA_SERVER` and `SUBAGENT_LLAMA_MODEL`), started on a free
//! port with the test suite's arguments, killed and reaped on drop.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

use crate::context::BenchContext;

pub struct LlamaServer {
    child: Child,
    pub port: u16,
}

impl LlamaServer {
    /// One slot, the test suite's arguments.
    pub fn start(cx: &BenchContext) -> Result<Self> {
        Self::start_with_slots(cx, 1)
    }

    /// `slots` requests decoded at once (`-np`), each with the one-slot
    /// server's context.
    pub fn start_with_slots(cx: &BenchContext, slots: usize) -> Result<Self> {
        // Absolute: it runs from its own directory (below).
        let server = std::fs::canonicalize(cx.external("SUBAGENT_LLAMA_SERVER")?)?;
        let model = cx.external("SUBAGENT_LLAMA_MODEL")?;
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        // From its own directory: the CPU-dispatch build also loads backend
        // libraries from the current directory.
        let dir = server
            .parent()
            .map(std::path::PathBuf::from)
            .unwrap_or_default();
        let child = Command::new(&server)
            .current_dir(dir)
            .arg("-m")
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--jinja", "-t", "2", "--no-webui"])
            .args(["-c", &(8192 * slots).to_string(), "-np", &slots.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("start llama-server")?;
        let mut server = Self { child, port };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !healthy(port) {
            if let Some(status) = server.child.try_wait()? {
                bail!("llama-server exited during start-up: {status}");
            }
            if Instant::now() > deadline {
                bail!("llama-server not healthy within 60 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(server)
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}

fn healthy(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200")
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
