//! `cargo xtask demo`: the main job, end to end, on this machine. Starts the
//! local model (llama-server with SmolLM2-135M on 127.0.0.1), runs one
//! subagent through the real `subagent` CLI, prints the result object and the
//! session file, and stops the server.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::{cmd, deps, local_model};

/// Longest wait for the model to load (60 s).
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// Kills the server however the demo ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs the demo.
pub fn run(task: &str, policy: deps::Policy) -> Result<()> {
    let root = crate::paths::repo_root();
    let model = local_model::ensure(policy)?;
    cmd::run(cmd::cargo().current_dir(&root).args([
        "build",
        "-p",
        "subagent-supervisor",
        "-p",
        "subagent-worker",
        "--bins",
    ]))?;
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let child = Command::new(&model.server)
        .arg("-m")
        .arg(&model.model)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--jinja", "-c", "8192", "-t", "2"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("start {}", model.server.display()))?;
    let mut server = Server(child);
    wait_healthy(&mut server, port)?;

    let sessions = tempdir_in_target(&root)?;
    let subagent = root.join("target/debug/subagent");
    let mut run = Command::new(&subagent);
    run.args(["run", "--agent", "general", "--task", task])
        .args(["--provider", "openai-chat", "--model", "smollm2"])
        .args(["--base-url", &format!("http://127.0.0.1:{port}/v1")])
        .args(["--max-tokens", "96", "--json", "--sessions-dir"])
        .arg(&sessions);
    eprintln!("$ {}", cmd::describe(&run));
    let output = run
        .output()
        .with_context(|| format!("run {}", subagent.display()))?;
    std::io::stdout().write_all(&output.stdout)?;
    std::io::stderr().write_all(&output.stderr)?;
    let result: serde_json::Value =
        serde_json::from_slice(&output.stdout).context("the result is not JSON")?;
    if let Some(file) = result["details"]["results"][0]["sessionFile"].as_str() {
        println!("\n--- session file {file} ---");
        println!("{}", std::fs::read_to_string(file)?);
    }
    if !output.status.success() {
        bail!("subagent exited with {}", output.status);
    }
    Ok(())
}

fn tempdir_in_target(root: &std::path::Path) -> Result<std::path::PathBuf> {
    let dir = root.join("target/demo-sessions");
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

fn wait_healthy(server: &mut Server, port: u16) -> Result<()> {
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    loop {
        if let Some(status) = server.0.try_wait()? {
            bail!("llama-server exited during startup: {status}");
        }
        if health_ok(port) {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("llama-server was not healthy within {STARTUP_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
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
