//! Issue 32: a worker started by a root supervisor ran with every
//! capability. Through the real CLI, a scripted model holds its first
//! turn while the test reads the worker's `/proc/<pid>/status`: no
//! capability effective, inheritable, ambient or bounding (when the
//! supervisor is root), none permitted but CAP_SETFCAP to a root worker
//! (mapping uid 0 into a tool's user namespace needs it), `no_new_privs`
//! set. Then the model's `python_execute` shows that
//! the tool sandbox is still built (its namespaces and view need no
//! capability of the worker) and that what needs a capability fails.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::*;

/// The pid of the `subagent-worker` whose working directory is in `dir`.
fn worker_in(dir: &Path) -> Option<u32> {
    running_in(dir)
        .into_iter()
        .find(|p| p.program().ends_with(b"subagent-worker"))
        .map(|p| p.pid)
}

/// `field` of `/proc/<pid>/status`.
fn status_field(pid: u32, field: &str) -> String {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .unwrap_or_else(|| panic!("no {field} in the status of {pid}"))
        .trim()
        .to_owned()
}

/// Python that prints its own capability sets and tries what needs a
/// capability: making a device node, naming the host, raising its
/// open-files hard limit, binding a port below 1024 (with the network on,
/// so only the capability is missing).
const TRIES: &str = "\
import os, resource, socket, stat
for line in open('/proc/self/status'):
    if line.startswith(('CapEff', 'CapBnd', 'NoNewPrivs')):
        print(line.strip())
for name, attempt in [
    ('mknod', lambda: os.mknod('null', stat.S_IFCHR | 0o600, os.makedev(1, 3))),
    ('hostname', lambda: socket.sethostname('tool')),
    ('rlimit', lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (1 << 20, 1 << 20))),
    ('bind80', lambda: socket.socket().bind(('127.0.0.1', 80))),
]:
    try:
        attempt()
        print(name, 'ok')
    except Exception as e:
        print(name, type(e).__name__)
";

/// The user a run is started as: this test's, or another one's.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum As {
    This,
    /// `nobody` (uid and gid 65534), for a root test process.
    Nobody,
}

const NOBODY: u32 = 65534;

#[test]
fn a_worker_holds_no_capability_and_its_tools_still_run() {
    binary("subagent");
    check_worker(As::This);
    // A root test process runs it again as a user that is not root.
    if is_root() {
        check_worker(As::Nobody);
    }
}

/// A directory for the run, owned by the user it runs as.
fn dir_for(who: As) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    if who == As::Nobody {
        std::os::unix::fs::chown(dir.path(), Some(NOBODY), Some(NOBODY)).unwrap();
    }
    dir
}

fn check_worker(who: As) {
    let workspace = dir_for(who);
    let sessions = dir_for(who);
    let home = dir_for(who);
    let model = ScriptedModel::start_held(vec![
        tool_call_turn("call_py", "python_execute", &json!({ "code": TRIES })),
        text_turn("done"),
    ]);
    let mut command = model.run_command(workspace.path(), sessions.path());
    command
        .args(["--timeout", "60", "--json", "--task", "Try it."])
        .args(["--tools", "python_execute"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    if who == As::Nobody {
        // std drops the supplementary groups of a root parent with the uid.
        std::os::unix::process::CommandExt::uid(&mut command, NOBODY);
        std::os::unix::process::CommandExt::gid(&mut command, NOBODY);
        command
            .env("HOME", home.path())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME")
            .env("PATH", "/usr/local/bin:/usr/bin:/bin");
    }
    // The network's user-mode stack (pasta) needs /dev/net/tun, which some
    // machines keep from users other than root.
    let network = who == As::This || tun_open_to_all();
    if network {
        command.arg("--allow-network");
    }
    let child = command.spawn().unwrap();
    // The worker waits for its first turn: read what it holds.
    let asked = model.wait_for_requests(1, Duration::from_secs(30));
    let worker = worker_in(workspace.path());
    let fields = worker.map(|pid| {
        [
            "CapInh:",
            "CapPrm:",
            "CapEff:",
            "CapBnd:",
            "CapAmb:",
            "NoNewPrivs:",
        ]
        .map(|f| status_field(pid, f))
    });
    model.release();
    model.release();
    let out = child.wait_with_output().unwrap();
    assert_nothing_runs_in(workspace.path());
    assert!(asked, "{who:?}: the model was never asked");
    let fields = fields.expect("no worker found while the model held its turn");
    eprintln!(
        "worker_privileges: {who:?}: CapInh, CapPrm, CapEff, CapBnd, CapAmb, NoNewPrivs: {fields:?}"
    );
    let zero = "0000000000000000";
    let root = who == As::This && is_root();
    // A root worker keeps CAP_SETFCAP permitted, not effective: its tool
    // processes raise it to map uid 0 into their user namespaces. Any
    // other user's holds nothing and cannot empty its bounding set (nor
    // needs to: no_new_privs).
    let permitted = if root { "0000000080000000" } else { zero };
    let bounding = if root { zero } else { fields[3].as_str() };
    assert_eq!(
        fields,
        [zero, permitted, zero, bounding, zero, "1"],
        "the worker's CapInh, CapPrm, CapEff, CapBnd, CapAmb, NoNewPrivs ({who:?}, root: {root})"
    );

    let (_, lines) = checked(&out, 0);
    let output = tool_output(&lines);
    assert!(
        output.contains(&format!("CapEff:\t{zero}")),
        "{who:?}: {output}"
    );
    assert!(
        output.contains(&format!("CapBnd:\t{zero}")),
        "{who:?}: {output}"
    );
    assert!(output.contains("NoNewPrivs:\t1"), "{who:?}: {output}");
    // A user that is not root has no cgroup of its own here: only the
    // isolation layers must all be in force.
    let missing = output
        .lines()
        .find(|l| l.starts_with("--- sandbox: not applied"))
        .unwrap_or_default();
    for layer in [
        "namespace",
        "filesystem_view",
        "landlock_fs",
        "seccomp",
        "capabilities",
    ] {
        assert!(!missing.contains(layer), "{who:?}: {missing}");
    }
    for refused in [
        "mknod PermissionError",
        "hostname PermissionError",
        "rlimit ValueError",
        "bind80 PermissionError",
    ] {
        if refused.starts_with("bind80") && !network {
            continue;
        }
        assert!(output.contains(refused), "{who:?}: {refused}: {output}");
    }
    // The tool sandbox was built without the worker's capabilities.
    let applied = sandbox_layers(&lines[0]);
    for layer in [
        "user_namespace",
        "pid_namespace",
        "mount_namespace",
        "filesystem_view",
        "landlock_fs",
        "seccomp",
        "no_capabilities",
    ] {
        assert!(
            applied.contains(&layer),
            "{who:?}: {layer} not in {applied:?}"
        );
    }
}

/// Whether every user may open `/dev/net/tun`.
fn tun_open_to_all() -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata("/dev/net/tun").is_ok_and(|m| m.permissions().mode() & 0o006 == 0o006)
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}
