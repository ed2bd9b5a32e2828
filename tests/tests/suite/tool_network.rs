//! Issue 33: with `--allow-network`, a `python_execute` call reached TCP
//! services on the host's 127.0.0.1 (and would reach a cloud metadata
//! service or the LAN): tool processes shared the host's network. Now they
//! get the run's private network namespace (pasta), where loopback,
//! link-local, private and special ranges and the host's own addresses
//! are refused (`crates/sandbox/src/net`).
//!
//! Through the real CLI with a scripted model, in a network namespace the
//! test makes itself (it re-runs itself under `unshare --net --mount`; the
//! script `crates/sandbox/tests/fixtures/netlab.py` builds the services):
//! never on the host's network.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use subagent_sandbox::net::StackKind;

use super::processes::{assert_nothing_runs_in, running_in};
use super::run_output::{checked, sandbox_layers, tool_output};
use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::*;

/// Set in the re-run inside the test's own namespaces.
const INNER: &str = "SUBAGENT_NET_TEST_INNER";

/// The namespaces and services of the test (see the script's doc).
const LAB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../crates/sandbox/tests/fixtures/netlab.py"
);

/// True in the re-run; otherwise runs `test` there, asserts it passed,
/// and returns false (also when this machine cannot, outside CI).
fn in_own_namespace(test: &str) -> bool {
    if std::env::var_os(INNER).is_some() {
        return true;
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let stacks = STACKS
        .iter()
        .all(|kind| stack_installed(kind.program_name()));
    if !(root && stacks) {
        subagent_test_support::skip::cannot_run(
            test,
            "it needs root, slirp4netns and pasta (apt-get install slirp4netns passt), which CI has",
        );
        return false;
    }
    let out = Command::new("unshare")
        .args(["--net", "--mount", "--"])
        .arg(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads", "1"])
        .env(INNER, "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the inner run failed:\n{text}");
    assert!(
        text.contains("1 passed"),
        "the inner run ran no test:\n{text}"
    );
    false
}

/// The lab, serving until dropped.
struct Lab {
    child: std::process::Child,
    services: BTreeMap<String, (String, u16)>,
}

impl Lab {
    fn start() -> Lab {
        let mut child = Command::new("python3")
            .arg(LAB)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let services = serde_json::from_str(&line).expect("the lab printed its services");
        Lab { child, services }
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Python that tries every service (and, as IPv4-mapped IPv6 addresses,
/// the 10.x and metadata ones), then `outside.test` by name over A and
/// AAAA, and tries to flush the namespace's rules; one `name VERDICT` line
/// each.
const PROBE: &str = r#"
import json, socket, subprocess
services = json.loads(SERVICES)
def attempt(name, address, family=0):
    try:
        if family:
            s = socket.socket(family, socket.SOCK_STREAM)
            s.settimeout(5)
            s.connect(address)
        else:
            s = socket.create_connection(address, timeout=5)
        print(name, 'REACHED' if s.recv(100).startswith(b'SECRET') else 'SILENT')
    except Exception as e:
        print(name, 'REFUSED', type(e).__name__, e)
def flush():
    try:
        r = subprocess.run(['ip', 'rule', 'flush'], capture_output=True)
        print('flush_rules', 'REACHED' if r.returncode == 0 else 'REFUSED', r.stderr.decode().strip())
    except Exception as e:
        print('flush_rules', 'REFUSED', type(e).__name__, e)
flush()
for name, (address, port) in services.items():
    attempt(name, (address, port))
for name in ('private_10', 'metadata'):
    address, port = services[name]
    attempt('mapped_' + name, ('::ffff:' + address, port), socket.AF_INET6)
try:
    v4 = socket.getaddrinfo('outside.test', services['outside'][1], socket.AF_INET)[0][4]
    v6 = socket.getaddrinfo('outside.test', services['outside_v6'][1], socket.AF_INET6)[0][4]
    attempt('dns_v4', v4[:2])
    attempt('dns_v6', v6[:2], socket.AF_INET6)
except Exception as e:
    print('dns_v4', 'REFUSED', type(e).__name__, e)
    print('dns_v6', 'REFUSED', type(e).__name__, e)
"#;

/// Both stacks, each run tested on.
const STACKS: [StackKind; 2] = [StackKind::Slirp4netns, StackKind::Pasta];

fn stack_installed(name: &str) -> bool {
    subagent_sandbox::net::find_stack(Some(std::ffi::OsStr::new(name)), None, false).is_ok()
}

/// Runs one `python_execute` call of [`PROBE`] with `flags` on `stack`;
/// returns each probe's verdict and the session header. The host's
/// loopback is at slirp4netns's gateway.
fn probe_run(lab: &Lab, stack: StackKind, flags: &[&str]) -> (BTreeMap<String, String>, Value) {
    let mut services = lab.services.clone();
    if stack == StackKind::Slirp4netns
        && let Some(loopback) = services.get_mut("loopback")
    {
        loopback.0 = subagent_sandbox::net::slirp::SLIRP_GATEWAY_V4.to_string();
    }
    let services = serde_json::to_string(&services).unwrap();
    let code = PROBE.replace("SERVICES", &format!("{services:?}"));
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_net", "python_execute", &json!({ "code": code })),
        text_turn("done"),
    ]);
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let out = model
        .run_command(workspace.path(), sessions.path())
        .args(["--timeout", "120", "--json", "--task", "Probe the network."])
        .args(["--tools", "python_execute"])
        .args(flags)
        .env(subagent_sandbox::net::STACK_VARIABLE, stack.program_name())
        .output()
        .unwrap();
    assert_nothing_runs_in(workspace.path());
    let left = network_stacks_here();
    assert!(
        left.is_empty(),
        "the network stack outlived the run: {left:?}"
    );
    let (_, lines) = checked(&out, 0);
    let output = tool_output(&lines);
    let verdicts = output
        .lines()
        .filter_map(|l| {
            let mut words = l.splitn(3, ' ');
            let name = words.next()?;
            let verdict = words.next()?;
            matches!(verdict, "REACHED" | "REFUSED" | "SILENT")
                .then(|| (name.to_owned(), l.to_owned()))
        })
        .collect();
    (verdicts, lines[0].clone())
}

fn assert_verdicts(verdicts: &BTreeMap<String, String>, expected: &[(&str, bool)], flags: &str) {
    for (name, reached) in expected {
        let line = verdicts
            .get(*name)
            .unwrap_or_else(|| panic!("{flags}: no verdict for {name}: {verdicts:#?}"));
        let word = if *reached { "REACHED" } else { "REFUSED" };
        assert!(
            line.starts_with(&format!("{name} {word}")),
            "{flags}: expected {name} {word}, got {line:?}"
        );
    }
}

#[test]
fn a_tool_with_the_network_reaches_the_outside_and_nothing_of_the_host() {
    if !in_own_namespace(
        "suite::tool_network::a_tool_with_the_network_reaches_the_outside_and_nothing_of_the_host",
    ) {
        return;
    }
    binary("subagent");
    let lab = Lab::start();
    for stack in STACKS {
        probe_every_flag(&lab, stack);
    }
}

/// The three probe runs of one stack: no flag, private networks,
/// link-local networks.
fn probe_every_flag(lab: &Lab, stack: StackKind) {
    let said = |flags: &str| format!("{flags} on {}", stack.program_name());

    let (verdicts, header) = probe_run(lab, stack, &["--allow-network"]);
    assert_verdicts(
        &verdicts,
        // Refusals first: a removed protection shows as what got through.
        &[
            ("loopback", false),
            ("own_address", false),
            ("private_10", false),
            ("metadata", false),
            ("mapped_private_10", false),
            ("mapped_metadata", false),
            ("flush_rules", false),
            ("outside", true),
            ("outside_v6", true),
            ("dns_v4", true),
            ("dns_v6", true),
        ],
        &said("--allow-network"),
    );
    let applied = sandbox_layers(&header);
    assert!(
        applied.contains(&"network_namespace_private"),
        "{applied:?}"
    );

    let (verdicts, _) = probe_run(lab, stack, &["--allow-network", "--allow-private-networks"]);
    assert_verdicts(
        &verdicts,
        &[
            ("metadata", false),
            ("mapped_metadata", false),
            ("outside", true),
            ("dns_v4", true),
            ("loopback", true),
            ("own_address", true),
            ("private_10", true),
            ("mapped_private_10", true),
        ],
        &said("--allow-network --allow-private-networks"),
    );

    // The separate flag opens link-local (the metadata service) and
    // nothing that --allow-private-networks opens.
    let (verdicts, _) = probe_run(
        lab,
        stack,
        &["--allow-network", "--allow-link-local-networks"],
    );
    assert_verdicts(
        &verdicts,
        &[
            ("loopback", false),
            ("own_address", false),
            ("private_10", false),
            ("mapped_private_10", false),
            ("flush_rules", false),
            ("metadata", true),
            ("outside", true),
            ("dns_v4", true),
        ],
        &said("--allow-network --allow-link-local-networks"),
    );
}

/// Without slirp4netns or pasta, `--allow-network` with a process tool is
/// refused before the run starts, in one line naming what to install;
/// never run on the host's network.
#[test]
fn without_a_network_stack_the_network_for_tools_is_refused_with_what_to_install() {
    let model = ScriptedModel::start(vec![text_turn("never asked")]);
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let empty_path = tempfile::tempdir().unwrap();
    for extra in [&[][..], &["--require-sandbox"][..]] {
        let out = model
            .run_command(workspace.path(), sessions.path())
            .args(["--timeout", "60", "--json", "--task", "Probe."])
            .args(["--tools", "python_execute", "--allow-network"])
            .args(extra)
            .env("PATH", empty_path.path())
            .output()
            .unwrap();
        assert_nothing_runs_in(workspace.path());
        let result: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        let message = result["details"]["error"]["message"].as_str().unwrap_or("");
        assert_eq!(
            result["details"]["error"]["code"], "SUBAGENT_SANDBOX_UNAVAILABLE",
            "{extra:?}: {result:#}"
        );
        assert!(message.contains("apt-get install slirp4netns"), "{message}");
        assert!(message.contains("apt-get install passt"), "{message}");
        assert!(!message.contains('\n'), "{message}");
    }
    assert!(model.requests().is_empty(), "the model was asked");
}

/// `doctor` names the network stack: pasta's path when it is on PATH, a
/// warning with what to install when it is not.
#[test]
fn doctor_reports_the_network_stack() {
    let dir = tempfile::tempdir().unwrap();
    let empty_path = tempfile::tempdir().unwrap();
    let stack = |path: Option<&std::path::Path>| {
        let mut command = Command::new(binary("subagent"));
        command
            .args(["doctor", "--json", "--sessions-dir"])
            .arg(dir.path().join("sessions"))
            .current_dir(dir.path())
            .env("HOME", dir.path().join("home"))
            .stdin(Stdio::null());
        if let Some(path) = path {
            command.env("PATH", path);
        }
        let out = command.output().unwrap();
        assert_nothing_runs_in(dir.path());
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        report["probes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "network_stack")
            .cloned()
            .unwrap_or_else(|| panic!("no network_stack probe: {report}"))
    };
    let missing = stack(Some(empty_path.path()));
    assert_eq!(missing["warning"], true, "{missing}");
    assert!(
        missing["fix"]
            .as_str()
            .unwrap()
            .contains("apt-get install slirp4netns"),
        "{missing}"
    );
    if let Ok(here) = subagent_sandbox::net::current_stack() {
        let found = stack(None);
        assert_eq!(found["ok"], true, "{found}");
        let detail = found["detail"].as_str().unwrap();
        let path = here.program.display().to_string();
        assert!(detail.contains(&path), "{found}");
        assert!(detail.starts_with(here.kind.program_name()), "{found}");
    }
}

/// A worker killed in the middle of a networked call leaves neither its
/// network's holder nor pasta behind: both stay in the worker's process
/// group and cgroup, which the run's tree kill takes along (pasta drops
/// its parent-death signal when it changes credentials).
#[test]
fn a_killed_worker_leaves_no_network_process_behind() {
    if !in_own_namespace("suite::tool_network::a_killed_worker_leaves_no_network_process_behind") {
        return;
    }
    binary("subagent");
    let _lab = Lab::start();
    for stack in STACKS {
        killed_worker_leaves_nothing(stack);
    }
}

/// One killed run on `stack`.
fn killed_worker_leaves_nothing(stack: StackKind) {
    let model = ScriptedModel::start(vec![
        tool_call_turn(
            "call_sleep",
            "python_execute",
            &json!({ "code": "import time\ntime.sleep(60)" }),
        ),
        text_turn("done"),
    ]);
    let workspace = tempfile::tempdir().unwrap();
    let sessions = tempfile::tempdir().unwrap();
    let child = model
        .run_command(workspace.path(), sessions.path())
        .args(["--timeout", "120", "--json", "--task", "Sleep."])
        .args(["--tools", "python_execute", "--allow-network"])
        .env(subagent_sandbox::net::STACK_VARIABLE, stack.program_name())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Until the call runs: the worker has started pasta (which works in
    // `/`, so it is found as the worker's child).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let find = || {
        // The worker is the `subagent-worker` that `subagent` started (its
        // network holder and the tools' keepers run the same program).
        let cli = std::process::id();
        let worker = running_in(workspace.path())
            .into_iter()
            .filter(|p| p.program().ends_with(b"subagent-worker"))
            .find(|p| {
                parent_of(p.pid)
                    .is_some_and(|pp| pp != cli && comm(pp).as_deref() == Some("subagent"))
            })?;
        let pasta = child_named(worker.pid, &["slirp4netns", "pasta", "passt"])?;
        Some((worker.pid, pasta))
    };
    let mut found = find();
    while found.is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
        found = find();
    }
    let (worker, pasta) = found.expect("the worker never started its network stack");
    // SAFETY: kill has no memory preconditions; the pid is the worker's.
    unsafe { libc::kill(i32::try_from(worker).unwrap(), libc::SIGKILL) };
    let out = child.wait_with_output().unwrap();
    assert!(
        stat_of(pasta).is_none_or(|(_, _, state)| state == 'Z'),
        "{} ({}) outlived its killed worker: {}",
        stack.program_name(),
        pasta,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_nothing_runs_in(workspace.path());
}

/// Live network-stack processes (slirp4netns, pasta) in this test's own
/// network namespace (each stays in the namespace it was started from;
/// pasta's `comm` may name the variant it exec'd, e.g. `passt.avx2`): a
/// run's stack must be gone with the run.
fn network_stacks_here() -> Vec<u32> {
    let here = std::fs::read_link("/proc/self/ns/net").unwrap();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            comm(*pid).is_some_and(|c| {
                c.starts_with("pasta") || c.starts_with("passt") || c.starts_with("slirp4netns")
            })
        })
        .filter(|pid| stat_of(*pid).is_some_and(|(_, _, state)| state != 'Z'))
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/ns/net"))
                .ok()
                .as_ref()
                == Some(&here)
        })
        .collect()
}

/// The command name, parent and state of `pid`.
fn stat_of(pid: u32) -> Option<(String, u32, char)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (comm, rest) = stat.split_once(" (")?.1.rsplit_once(") ")?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((comm.to_owned(), ppid, state))
}

fn parent_of(pid: u32) -> Option<u32> {
    stat_of(pid).map(|(_, ppid, _)| ppid)
}

fn comm(pid: u32) -> Option<String> {
    stat_of(pid).map(|(comm, _, _)| comm)
}

/// The pid of a live child of `parent` whose command starts with one of
/// `names` (pasta re-executes itself, as `passt.avx2` where the CPU has
/// AVX2).
fn child_named(parent: u32, names: &[&str]) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.find_map(|entry| {
        let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
        let (comm, ppid, state) = stat_of(pid)?;
        let named = names.iter().any(|n| comm.starts_with(n));
        (ppid == parent && named && state != 'Z').then_some(pid)
    })
}
