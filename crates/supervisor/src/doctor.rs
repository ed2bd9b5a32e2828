//! `subagent doctor`: what this machine can enforce and reach, one
//! [`Probe`] per question, each either ok with what was found or missing
//! with what is missing and the command or setting that fixes it.
//!
//! The probes that only interpret facts ([`landlock_probe`],
//! [`namespaces_probe`], [`filesystem_view_probe`], [`cgroup_probe`], [`python_probe_from`], [`parse_http_url`],
//! [`model_ids`]) are pure and tested without the machine; the others
//! look once (run `python3`, create and remove a probe file, connect) and
//! never change anything beyond the sessions dir a run would create anyway.
//! Nothing here runs a worker or sends an API key.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;
use subagent_sandbox::{CgroupKind, IsolationSupport};

/// How long `python3` may take to print its version: a cold start on a
/// slow disk takes seconds, a hung interpreter must not hang the doctor.
pub const PYTHON_TIMEOUT: Duration = Duration::from_secs(10);

/// How long connecting to, and then hearing back from, a model endpoint
/// may take: a local server answers in milliseconds, an unroutable address
/// would otherwise block for the kernel's connect timeout (minutes).
pub const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(3);

/// The most of a `/models` answer that is read (bytes): model lists are a
/// few KiB; a server streaming without end must not fill memory.
const MAX_MODELS_BODY_BYTES: u64 = 1024 * 1024;

/// The answer to one question about this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Probe {
    /// Short stable name, e.g. `landlock`, `cgroup`, `python3`.
    pub name: String,
    /// Whether what the probe asks for is there.
    pub ok: bool,
    /// What was found, or what is missing.
    pub detail: String,
    /// The command or setting that fixes a missing probe.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Probe {
    /// A probe that found what it looked for.
    pub fn ok(name: &str, detail: impl Into<String>) -> Self {
        Self {
            name: name.to_owned(),
            ok: true,
            detail: detail.into(),
            fix: None,
        }
    }

    /// A probe that did not, with how to fix it.
    pub fn missing(name: &str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            name: name.to_owned(),
            ok: false,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    /// The probe as one line of text: `ok  <name>: <detail>` or
    /// `MISSING  <name>: <detail> -- <fix>`. Line breaks inside the texts
    /// become spaces so every probe stays one line.
    pub fn line(&self) -> String {
        let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        match (self.ok, &self.fix) {
            (true, _) => format!("ok  {}: {}", self.name, one_line(&self.detail)),
            (false, Some(fix)) => format!(
                "MISSING  {}: {} -- {}",
                self.name,
                one_line(&self.detail),
                one_line(fix)
            ),
            (false, None) => format!("MISSING  {}: {}", self.name, one_line(&self.detail)),
        }
    }
}

/// Every probe of one doctor run: the `--json` output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Whether every probe is ok.
    pub ok: bool,
    /// The probes, in the order they ran.
    pub probes: Vec<Probe>,
}

impl Report {
    /// A report over `probes`; ok when every one is.
    pub fn new(probes: Vec<Probe>) -> Self {
        Self {
            ok: probes.iter().all(|p| p.ok),
            probes,
        }
    }
}

/// The tool sandbox's layers (`landlock`, `seccomp`, `namespaces`,
/// `filesystem_view`) from the sandbox's own probe, whose errors already
/// say why a layer is missing.
pub fn isolation_probes(support: &IsolationSupport) -> Vec<Probe> {
    vec![
        landlock_probe(&support.landlock_abi),
        seccomp_probe(&support.seccomp),
        namespaces_probe(&support.namespaces),
        filesystem_view_probe(&support.filesystem_view),
    ]
}

/// Landlock filesystem rules, from the probed ABI version.
pub fn landlock_probe(abi: &Result<i32, String>) -> Probe {
    match abi {
        Ok(abi) => Probe::ok("landlock", format!("ABI {abi}")),
        Err(why) => Probe::missing(
            "landlock",
            why.as_str(),
            "use Linux 5.13+ with Landlock enabled: add `landlock` to the kernel's `lsm=` boot \
             parameter (check /sys/kernel/security/lsm)",
        ),
    }
}

/// seccomp filters.
pub fn seccomp_probe(support: &Result<(), String>) -> Probe {
    match support {
        Ok(()) => Probe::ok(
            "seccomp",
            "filters can be installed (syscall denylist, no setuid/setgid modes, no new \
             namespaces, unix and inet sockets only)",
        ),
        Err(why) => Probe::missing(
            "seccomp",
            why.as_str(),
            "use a kernel with CONFIG_SECCOMP_FILTER, and in a container allow installing filters \
             (e.g. `docker run --security-opt seccomp=unconfined`)",
        ),
    }
}

/// User, pid, mount, IPC, UTS, cgroup and network namespaces with a
/// fresh `/proc`.
pub fn namespaces_probe(support: &Result<(), String>) -> Probe {
    match support {
        Ok(()) => Probe::ok(
            "namespaces",
            "user, pid, mount, IPC, UTS, cgroup and network namespaces with a fresh /proc",
        ),
        Err(why) => Probe::missing(
            "namespaces",
            why.as_str(),
            "allow unprivileged user namespaces: `sysctl -w user.max_user_namespaces=15000` and, \
             where they exist, `sysctl -w kernel.unprivileged_userns_clone=1` and \
             `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`; in a container, \
             allow unshare and an unmasked /proc",
        ),
    }
}

/// The filesystem view: a tmpfs root with read-only binds, entered by
/// `pivot_root` in the namespaces.
pub fn filesystem_view_probe(support: &Result<(), String>) -> Probe {
    match support {
        Ok(()) => Probe::ok(
            "filesystem_view",
            "tmpfs root, read-only nosuid,nodev binds and pivot_root in a user namespace",
        ),
        Err(why) => Probe::missing(
            "filesystem_view",
            why.as_str(),
            "fix the namespaces probe first; then the view needs tmpfs, bind mounts and \
             pivot_root inside a user namespace (a container must not deny mount to it) and \
             a /tmp directory to stage on",
        ),
    }
}

/// Per-child cgroups with memory and pids caps, from the sandbox's probe.
pub fn cgroup_probe(support: &Result<CgroupKind, String>) -> Probe {
    match support {
        Ok(CgroupKind::V1 { freezer, .. }) => Probe::ok(
            "cgroup",
            if freezer.is_some() {
                "v1, memory and pids controllers writable (freezer too)"
            } else {
                "v1, memory and pids controllers writable (no writable freezer)"
            },
        ),
        Ok(CgroupKind::V2 {
            dir,
            leaf: Some(leaf),
            ..
        }) => Probe::ok(
            "cgroup",
            format!(
                "v2, delegated to us at {}: the supervisor moves itself into {} and makes \
                 its children's cgroups beside it, with memory and pids caps",
                dir.display(),
                leaf.display()
            ),
        ),
        Ok(CgroupKind::V2 { .. }) => {
            Probe::ok("cgroup", "v2, memory and pids controllers writable")
        }
        // The enum is non_exhaustive: a future hierarchy is still usable.
        Ok(other) => Probe::ok("cgroup", format!("{other:?}")),
        Err(why) => Probe::missing(
            "cgroup",
            why.as_str(),
            "meanwhile memory is capped per process by RLIMIT_DATA (not per process tree) and \
             pids are not capped; for cgroup caps run the supervisor in a cgroup with the \
             memory and pids controllers delegated to its user, e.g. \
             `systemd-run --user --scope -p Delegate=yes subagent ...`",
        ),
    }
}

/// What running `python3` gave: its exit status and output, or why it could
/// not be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PythonOutcome {
    /// It exited; `success` is its status, `stdout`/`stderr` what it printed.
    Exited {
        /// Whether it exited 0.
        success: bool,
        /// What it printed on stdout.
        stdout: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// It could not be started (e.g. not on `PATH`).
    NotStarted(String),
    /// It did not finish within the timeout and was killed.
    TimedOut,
}

const PYTHON_FIX: &str = "install Python 3 and put `python3` on PATH, e.g. \
    `apt-get install python3` or `dnf install python3`; python_execute needs it";

/// The `python3` probe from what running it gave; ok detail is
/// `<version> at <executable>`.
pub fn python_probe_from(outcome: &PythonOutcome) -> Probe {
    match outcome {
        PythonOutcome::Exited {
            success: true,
            stdout,
            ..
        } => match stdout.trim().split_once(' ') {
            Some((version, executable)) if version.starts_with('3') => {
                Probe::ok("python3", format!("{version} at {executable}"))
            }
            _ => Probe::missing(
                "python3",
                format!("`python3` is not Python 3 (it printed {:?})", stdout.trim()),
                PYTHON_FIX,
            ),
        },
        PythonOutcome::Exited { stderr, .. } => Probe::missing(
            "python3",
            format!("`python3 -I -c ...` failed: {}", stderr.trim()),
            PYTHON_FIX,
        ),
        PythonOutcome::NotStarted(why) => Probe::missing(
            "python3",
            format!("cannot run `python3`: {why}"),
            PYTHON_FIX,
        ),
        PythonOutcome::TimedOut => Probe::missing(
            "python3",
            format!(
                "`python3` did not print its version within {}s",
                PYTHON_TIMEOUT.as_secs()
            ),
            PYTHON_FIX,
        ),
    }
}

/// Runs `python3 -I` (isolated: no user site, no `PYTHON*` variables, as
/// the tool sandbox runs it) to learn its version and real executable.
pub fn run_python(timeout: Duration) -> PythonOutcome {
    let child = Command::new("python3")
        .args([
            "-I",
            "-c",
            "import sys; print(sys.version.split()[0], sys.executable)",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => return PythonOutcome::NotStarted(e.to_string()),
    };
    // Polling is enough: the output is one short line, far below a pipe's
    // buffer, so the child cannot block on a full pipe while we wait.
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return PythonOutcome::TimedOut;
            }
            Err(e) => return PythonOutcome::NotStarted(e.to_string()),
        }
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    if let Some(mut out) = child.stdout.take() {
        let _ = out.read_to_string(&mut stdout);
    }
    if let Some(mut err) = child.stderr.take() {
        let _ = err.read_to_string(&mut stderr);
    }
    PythonOutcome::Exited {
        success: status.success(),
        stdout,
        stderr,
    }
}

const SESSIONS_FIX: &str = "pass `--sessions-dir` with a writable directory, or set \
    SUBAGENT_HOME (sessions go to $SUBAGENT_HOME/sessions)";

/// The sessions dir exists or can be created, and a file can be created
/// and removed in it. `None` means no default could be found.
pub fn sessions_dir_probe(dir: Option<&Path>) -> Probe {
    let Some(dir) = dir else {
        return Probe::missing(
            "sessions-dir",
            "no default sessions dir: none of SUBAGENT_HOME, XDG_STATE_HOME, HOME is set",
            SESSIONS_FIX,
        );
    };
    // A run creates it the same way, so creating it here changes nothing a
    // run would not.
    if let Err(e) = std::fs::create_dir_all(dir) {
        return Probe::missing(
            "sessions-dir",
            format!("cannot create {}: {e}", dir.display()),
            SESSIONS_FIX,
        );
    }
    let probe_file = dir.join(format!(".subagent-doctor-{}", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe_file)
        .and_then(|_| std::fs::remove_file(&probe_file));
    match written {
        Ok(()) => Probe::ok("sessions-dir", format!("{} is writable", dir.display())),
        Err(e) => Probe::missing(
            "sessions-dir",
            format!("cannot write in {}: {e}", dir.display()),
            SESSIONS_FIX,
        ),
    }
}

const WORKER_FIX: &str = "build it (`cargo build --bins` puts subagent-worker next to \
    subagent), or pass `--worker PATH` / set SUBAGENT_WORKER";

/// The worker binary exists, is a file and is executable. `None` means its
/// default place could not be worked out.
pub fn worker_probe(worker: Option<&Path>) -> Probe {
    let Some(worker) = worker else {
        return Probe::missing(
            "worker",
            "cannot locate subagent-worker next to this binary",
            WORKER_FIX,
        );
    };
    match std::fs::metadata(worker) {
        Err(e) => Probe::missing("worker", format!("{}: {e}", worker.display()), WORKER_FIX),
        Ok(meta) if !meta.is_file() => Probe::missing(
            "worker",
            format!("{} is not a file", worker.display()),
            WORKER_FIX,
        ),
        Ok(_) => match nix::unistd::access(worker, nix::unistd::AccessFlags::X_OK) {
            Ok(()) => Probe::ok("worker", format!("{} is executable", worker.display())),
            Err(e) => Probe::missing(
                "worker",
                format!("{} is not executable: {e}", worker.display()),
                format!("`chmod +x {}`, or {WORKER_FIX}", worker.display()),
            ),
        },
    }
}

/// Where an `http://` or `https://` base URL points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpTarget {
    /// Whether the scheme is `https` (TLS: only connecting is checked).
    pub tls: bool,
    /// Host name or address, without IPv6 brackets.
    pub host: String,
    /// Port, the scheme's default when the URL names none.
    pub port: u16,
    /// The base path without a trailing `/` (`/v1`, or empty).
    pub path: String,
}

/// Splits a base URL into scheme, host, port and path; the error says what
/// is wrong with it.
pub fn parse_http_url(url: &str) -> Result<HttpTarget, String> {
    let (tls, rest) = if let Some(rest) = url.strip_prefix("http://") {
        (false, rest)
    } else if let Some(rest) = url.strip_prefix("https://") {
        (true, rest)
    } else {
        return Err(format!("{url:?} is not an http:// or https:// URL"));
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    // Userinfo is not ours to send; only where it points matters.
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let default_port = if tls { 443 } else { 80 };
    let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        let (host, after) = bracketed
            .split_once(']')
            .ok_or_else(|| format!("{url:?} has an unclosed IPv6 address"))?;
        (host, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err(format!("{url:?} has no host"));
    }
    let port = match port {
        None | Some("") => default_port,
        Some(p) => p
            .parse()
            .map_err(|_| format!("{url:?} has a bad port {p:?}"))?,
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    Ok(HttpTarget {
        tls,
        host: host.to_owned(),
        port,
        path: path.trim_end_matches('/').to_owned(),
    })
}

/// The model ids of a `/models` answer (`{"data":[{"id":...}]}`, the shape
/// OpenAI, Anthropic, llama-server and Ollama share); `None` when the body
/// is not that.
pub fn model_ids(body: &str) -> Option<Vec<String>> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    let ids = value
        .get("data")?
        .as_array()?
        .iter()
        .filter_map(|m| m.get("id")?.as_str().map(str::to_owned))
        .collect();
    Some(ids)
}

const ENDPOINT_FIX: &str = "start the model server or correct `--base-url` \
    (e.g. `cargo xtask local-model serve --port 8080` and `--base-url http://127.0.0.1:8080/v1`)";

/// The model endpoint: reachable, and, when its `/models` list can be read,
/// whether `model` is in it (a second probe, `model`).
///
/// Plain `http://` endpoints get a real `GET <base>/models`; for
/// `https://` only the TCP connection is checked (this crate has no TLS
/// client), and the detail says so.
pub fn endpoint_probes(base_url: &str, provider: &str, model: Option<&str>) -> Vec<Probe> {
    let target = match parse_http_url(base_url) {
        Ok(target) => target,
        Err(why) => {
            return vec![Probe::missing(
                "endpoint",
                why,
                "pass `--base-url` as a URL, e.g. http://127.0.0.1:8080/v1",
            )];
        }
    };
    let mut stream = match connect(&target) {
        Ok(stream) => stream,
        Err(why) => {
            return vec![Probe::missing(
                "endpoint",
                format!("{base_url} ({provider}) is unreachable: {why}"),
                ENDPOINT_FIX,
            )];
        }
    };
    if target.tls {
        return vec![Probe::ok(
            "endpoint",
            format!(
                "{base_url} ({provider}) accepts connections; the model list was not read \
                 (https is checked by connecting only)"
            ),
        )];
    }
    let (status, body) = match get_models(&mut stream, &target) {
        Ok(answer) => answer,
        Err(why) => {
            return vec![Probe::missing(
                "endpoint",
                format!(
                    "{base_url} ({provider}) accepted a connection but GET /models failed: {why}"
                ),
                ENDPOINT_FIX,
            )];
        }
    };
    let ids = (200..300)
        .contains(&status)
        .then(|| model_ids(&body))
        .flatten();
    let Some(ids) = ids else {
        // Reachable is what this probe asks; a 401 without a key or a
        // server without /models still answers.
        return vec![Probe::ok(
            "endpoint",
            format!("{base_url} ({provider}) answers (HTTP {status}); no model list to check"),
        )];
    };
    let mut probes = vec![Probe::ok(
        "endpoint",
        format!(
            "{base_url} ({provider}) answers; {} model(s) listed",
            ids.len()
        ),
    )];
    if let Some(model) = model {
        probes.push(if ids.iter().any(|id| id == model) {
            Probe::ok("model", format!("{model} is listed"))
        } else {
            Probe::missing(
                "model",
                format!("{model} is not listed (listed: {})", ids.join(", ")),
                "pass `--model` with one of the listed ids, or load that model on the server",
            )
        });
    }
    probes
}

fn connect(target: &HttpTarget) -> Result<TcpStream, String> {
    let addrs: Vec<SocketAddr> = (target.host.as_str(), target.port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {}: {e}", target.host))?
        .collect();
    let mut last = format!("{} resolves to no address", target.host);
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, ENDPOINT_TIMEOUT) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = format!("connecting to {addr}: {e}"),
        }
    }
    Err(last)
}

/// One `GET <base>/models`, as HTTP/1.0 so the answer is never chunked and
/// ends when the server closes.
fn get_models(stream: &mut TcpStream, target: &HttpTarget) -> Result<(u16, String), String> {
    stream
        .set_read_timeout(Some(ENDPOINT_TIMEOUT))
        .and_then(|()| stream.set_write_timeout(Some(ENDPOINT_TIMEOUT)))
        .map_err(|e| e.to_string())?;
    let host = if target.host.contains(':') {
        format!("[{}]:{}", target.host, target.port)
    } else {
        format!("{}:{}", target.host, target.port)
    };
    let request = format!(
        "GET {}/models HTTP/1.0\r\nHost: {host}\r\nAccept: application/json\r\n\
         User-Agent: subagent-doctor\r\nConnection: close\r\n\r\n",
        target.path
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("sending the request: {e}"))?;
    let mut answer = Vec::new();
    stream
        .take(MAX_MODELS_BODY_BYTES)
        .read_to_end(&mut answer)
        .map_err(|e| format!("reading the answer: {e}"))?;
    let answer = String::from_utf8_lossy(&answer);
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .ok_or("the answer is not HTTP (no end of headers)")?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or("the answer is not HTTP (no status line)")?;
    Ok((status, body.to_owned()))
}

#[cfg(test)]
#[path = "doctor_tests.rs"]
mod tests;
