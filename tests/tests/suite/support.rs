//! Shared helpers: run the fixture worker through the real supervisor,
//! validate session files against the shared schema, and prove that no
//! process of the tree survived (those live in [`super::processes`] and
//! are re-exported here, with [`super::run_output`]'s readers of a
//! finished run, so a test's `use super::support::*` has them all).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use subagent_protocol::{ApiKey, ProviderKind, ProviderSpec};
use subagent_supervisor::{RunRequest, Supervisor, SupervisorConfig, WorkerCommand};
use tokio_util::sync::CancellationToken;

pub use super::processes::{
    assert_no_survivors, assert_nothing_runs_in, assert_reaped, processes_in, running_in,
    survivors, unreaped_leader,
};
pub use super::run_output::{
    assert_exit, assert_exit_saying, checked, of_type, sandbox_layers, session_file_of, stderr,
    tool_output, tool_result,
};
pub use subagent_test_support::wait_until;

pub const FIXTURE: &str = env!("CARGO_BIN_EXE_fixture-worker");

/// The product binary `name` (`subagent`, `subagent-worker`,
/// `subagent-render-page`) as this suite runs it: this package's copy,
/// built by Cargo with the suite, under its product name beside the
/// others (`subagent_test_support::bins`).
pub fn binary(name: &str) -> PathBuf {
    subagent_test_support::bins::binary("suite", &UNDER_TEST, name)
}

/// This package's copies of the product binaries, by product name.
const UNDER_TEST: [(&str, &str); 3] = [
    ("subagent", env!("CARGO_BIN_EXE_subagent-under-test")),
    (
        "subagent-worker",
        env!("CARGO_BIN_EXE_subagent-worker-under-test"),
    ),
    (
        "subagent-render-page",
        env!("CARGO_BIN_EXE_subagent-render-page-under-test"),
    ),
];
pub const TEST_API_KEY: &str = "sk-test-abcdefghijklmnopqrstuvwxyz0123";

/// `value` validates against `validator`; `what` names it in the failure.
pub fn assert_validates(validator: &jsonschema::Validator, value: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not validate: {errors:?}\n{value:#}"
    );
}

pub fn schema(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../schemas")
        .join(name);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
}

/// One fixture run: its own sessions dir and a marker unique to the run.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub marker: String,
    pub mode: String,
}

impl Fixture {
    pub fn new(mode: &str) -> Self {
        let marker = format!(
            "subagent-test-marker-{}-{}",
            std::process::id(),
            uuid_like()
        );
        Self {
            dir: tempfile::tempdir().unwrap(),
            marker,
            mode: mode.to_owned(),
        }
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.dir.path().join("sessions")
    }

    pub fn config(&self) -> SupervisorConfig {
        let worker = WorkerCommand {
            program: PathBuf::from(FIXTURE),
            args: vec![self.mode.clone().into(), self.marker.clone().into()],
        };
        SupervisorConfig::new(worker, self.sessions_dir())
    }

    pub fn request(&self) -> RunRequest {
        let provider = ProviderSpec {
            kind: ProviderKind::OpenaiChat,
            base_url: "http://127.0.0.1:9/v1".into(),
            model: "fixture-model".into(),
            api_key: Some(ApiKey::new(TEST_API_KEY)),
            temperature: None,
            max_tokens: None,
            reasoning: false,
            price: None,
        };
        let mut r = RunRequest::new("general", format!("fixture task ({})", self.mode), provider);
        r.workspace_dir = self.dir.path().to_owned();
        r
    }

    /// Runs the request and checks the invariants every run must keep: the
    /// result validates, the session file validates and ends with a
    /// lifecycle line, and nothing of the tree is alive.
    pub async fn run(&self, request: RunRequest) -> Outcome {
        self.run_with(
            Supervisor::new(self.config()),
            request,
            CancellationToken::new(),
        )
        .await
    }

    pub async fn run_with(
        &self,
        supervisor: Supervisor,
        request: RunRequest,
        cancel: CancellationToken,
    ) -> Outcome {
        let started = Instant::now();
        let result = supervisor.run(request, cancel).await;
        let elapsed = started.elapsed();
        let json = serde_json::to_value(&result).unwrap();
        assert_valid_result(&json);
        let session = result
            .details
            .results
            .first()
            .and_then(|r| r.session_file.clone())
            .map(PathBuf::from);
        let lines = session
            .as_deref()
            .map(check_session_file)
            .unwrap_or_default();
        assert_no_survivors(&self.marker);
        assert_reaped(&lines);
        Outcome {
            json,
            lines,
            elapsed,
        }
    }
}

pub struct Outcome {
    pub json: Value,
    pub lines: Vec<Value>,
    pub elapsed: Duration,
}

impl Outcome {
    pub fn code(&self) -> Option<&str> {
        self.json["details"]["error"]["code"].as_str()
    }
    pub fn single(&self) -> &Value {
        &self.json["details"]["results"][0]
    }
    pub fn termination(&self) -> &str {
        self.single()["termination"]["reason"]
            .as_str()
            .unwrap_or("<none>")
    }
    pub fn text(&self) -> &str {
        self.json["content"][0]["text"].as_str().unwrap()
    }
    pub fn lines_of(&self, ty: &str) -> Vec<&Value> {
        self.lines.iter().filter(|l| l["type"] == ty).collect()
    }
    /// The session file has a `limit` line for `limit`.
    pub fn recorded_limit(&self, limit: &str) -> bool {
        self.lines_of("limit").iter().any(|l| l["limit"] == limit)
    }
}

/// Every line parses and validates; the first is the header, the last an
/// ending lifecycle line.
pub fn check_session_file(path: &Path) -> Vec<Value> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    assert!(text.ends_with('\n'), "session file must end with a newline");
    let validator = schema("session-line.schema.json");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l:?}: {e}")))
        .collect();
    for l in &lines {
        assert_validates(&validator, l, "line");
    }
    assert_eq!(
        lines.first().map(|l| l["type"].clone()),
        Some(Value::from("session")),
        "first line is the header"
    );
    let last = lines.last().unwrap();
    assert_eq!(
        last["type"], "agent_event",
        "last line is lifecycle: {last}"
    );
    let ev = last["eventType"].as_str().unwrap();
    assert!(
        ev == "subagent:complete" || ev == "subagent:error" || ev == "subagent:aborted",
        "{ev}"
    );
    assert_endings_say_why(&lines);
    lines
}

/// Every failed or aborted ending line carries its reason: a non-empty
/// error code and message (and, when it names one, the limit as name and
/// value), so `sessions ls/show` can say why.
pub fn assert_endings_say_why(lines: &[Value]) {
    for l in lines.iter().filter(|l| {
        l["type"] == "agent_event" && matches!(l["status"].as_str(), Some("failed" | "aborted"))
    }) {
        let error = &l["error"];
        assert!(
            error["code"].as_str().is_some_and(|c| !c.is_empty())
                && error["message"].as_str().is_some_and(|m| !m.is_empty()),
            "a failed or aborted ending must carry its error code and message: {l}"
        );
        if !error["limit"].is_null() {
            assert!(
                error["limit"]["name"].is_string() && error["limit"]["value"].is_number(),
                "{l}"
            );
        }
    }
}

/// A directory for what a test leaves to be looked at afterwards
/// (screenshots): `<target dir>/test-artifacts/<test>`, made empty.
pub fn artifacts_dir(test: &str) -> PathBuf {
    let profile_dir = Path::new(FIXTURE).parent().unwrap();
    let dir = profile_dir
        .parent()
        .unwrap()
        .join("test-artifacts")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every `*.jsonl` file under `dir`, at any depth; none when `dir` is
/// missing (a run refused before it started makes no sessions dir).
pub fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    files
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{t:x}-{}", N.fetch_add(1, Ordering::SeqCst))
}

/// A FIFO (mode 0600) made at `path`: a file no one writes, which a
/// blocking open or read of waits on for ever.
pub fn make_fifo(path: &Path) {
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo reads a NUL-terminated path that lives for the call.
    let made = unsafe { libc::mkfifo(name.as_ptr(), 0o600) };
    assert_eq!(made, 0, "mkfifo {}", path.display());
}

/// `command` started with its three pipes, `input` written to its stdin
/// and the stdin closed (`subagent call` reads its payload to the end).
pub fn spawn_with_stdin(command: &mut std::process::Command, input: &[u8]) -> std::process::Child {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child
}

/// Whether this machine lets us enforce cgroup caps; prints why not.
pub fn cgroups_or_skip(test: &str) -> bool {
    match subagent_sandbox::cgroup_support() {
        Ok(_) => true,
        Err(reason) => {
            eprintln!("{test}: skipped: no writable cgroup hierarchy ({reason})");
            false
        }
    }
}

/// `subagent run` with the fixture worker (chosen by `--task fixture:MODE`),
/// session files under `sessions`, model `fixture-model` and an unused
/// loopback base URL; stdin closed. Callers add the task and other flags.
pub fn fixture_cli(sessions: &Path) -> std::process::Command {
    fixture_command(&["run"], sessions)
}

/// `subagent COMMAND` (`run`, `batch`, `serve --stdio`...) with the fixture
/// worker, as [`fixture_cli`] sets it up.
pub fn fixture_command(command: &[&str], sessions: &Path) -> std::process::Command {
    let mut c = std::process::Command::new(binary("subagent"));
    c.args(command)
        .arg("--worker")
        .arg(FIXTURE)
        .arg("--sessions-dir")
        .arg(sessions)
        .args([
            "--model",
            "fixture-model",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ])
        .stdin(std::process::Stdio::null());
    c
}

/// Every child named in a CLI result left a valid session file ending in a
/// lifecycle line, and its worker is gone from the process table.
pub fn assert_children_reaped(result: &Value) {
    for child in result["details"]["results"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if let Some(file) = child["sessionFile"].as_str() {
            assert_reaped(&check_session_file(Path::new(file)));
        }
    }
}

/// The result object validates against `schemas/result.schema.json`.
pub fn assert_valid_result(json: &Value) {
    assert_validates(&schema("result.schema.json"), json, "result");
}

/// `subagent trust DIR` with `home` as HOME (no XDG_CONFIG_HOME): the
/// operator's word that the project files a run in `dir` reads may
/// configure it. Runs ignore a project's config and agent files until
/// then; tests that write them call this after.
pub fn trust_project(dir: &Path, home: &Path) {
    let out = std::process::Command::new(binary("subagent"))
        .arg("trust")
        .arg(dir)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "subagent trust {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A one-thread runtime for a loopback test server and its listener on an
/// ephemeral port of 127.0.0.1, with the address: how every scripted
/// server of these tests starts.
pub fn loopback_server() -> (
    tokio::runtime::Runtime,
    tokio::net::TcpListener,
    std::net::SocketAddr,
) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    (runtime, listener, addr)
}

/// `text` chained under this user's session key (the user config dir of
/// this process's environment), as only subagent can: for fixtures made
/// by hand, or cut from a real file, that must still verify.
pub fn sign_as_this_user(text: &str) -> String {
    let dir = subagent_supervisor::config::user_config_dir(
        std::env::var_os("XDG_CONFIG_HOME"),
        std::env::var_os("HOME"),
    )
    .expect("a user config dir (XDG_CONFIG_HOME or HOME)");
    sign_with_key_in(&dir, text)
}

/// `text` chained under the session key kept in `config_dir` (a user's
/// `subagent` config dir), made there first if there is none.
pub fn sign_with_key_in(config_dir: &Path, text: &str) -> String {
    let key = subagent_supervisor::session::key::load_or_create(config_dir).unwrap();
    subagent_supervisor::session::chain::reseal(&key, text).unwrap()
}

/// Whether `program` runs here (`program version_arg` exits 0). When it
/// does not, CI fails the test (its set-up installs `package`); elsewhere
/// the caller skips, with a line saying so.
pub fn program_or_skip(test: &str, program: &str, version_arg: &str, package: &str) -> bool {
    let found = std::process::Command::new(program)
        .arg(version_arg)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "{test}: {program} is missing under CI; install it (apt-get install {package})"
        );
        eprintln!("{test}: skipped: {program} is not installed");
    }
    found
}
