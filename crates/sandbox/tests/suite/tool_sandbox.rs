//! The tool sandbox's layers against real escape attempts by a real Python
//! process: each attempt is denied with every layer on, and each test that
//! names a layer has a control that switches that layer off and shows the
//! very same probe getting through, so the test cannot pass by accident.
//!
//! Needs user namespaces, Landlock and seccomp: see [`super::support::needs`]
//! for what happens on a machine without them.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};

use subagent_sandbox::{ChildExit, Isolation, Layers, Termination, protection, spawn};

use super::support::{
    MARKER_VAR, assert_nothing_alive, finish, marker, needs_file, needs_landlock_abi,
    needs_tool_sandbox, needs_x86_64,
};
use super::tool_sandbox_support::{
    Dirs, assert_denied, assert_escaped, assert_layer_stops, dirs, probe, python_spec, run, stdout,
    strict, without,
};

#[tokio::test]
async fn python_runs_and_every_layer_is_reported_applied() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let marker = marker().await;
    let code = "import json, ssl, os, sys\nprint(6 * 7, os.getcwd() == sys.argv[0] or True)";
    let child = spawn(python_spec(code, &dirs, &marker, strict(&dirs)))
        .await
        .unwrap();
    let pid = child.pid();
    let applied = child.status().applied.clone();
    let not_applied = child.status().not_applied.clone();
    let exit = finish(child).await;
    assert_eq!(
        exit.termination,
        Termination::Exited { code: 0 },
        "{exit:?}"
    );
    assert_eq!(stdout(&exit), "42 True\n");
    for layer in [
        protection::USER_NAMESPACE,
        protection::PID_NAMESPACE,
        protection::MOUNT_NAMESPACE,
        protection::FRESH_PROC,
        protection::NETWORK_NAMESPACE,
        protection::IPC_NAMESPACE,
        protection::UTS_NAMESPACE,
        protection::CGROUP_NAMESPACE,
        protection::FILESYSTEM_VIEW,
        protection::PRIVATE_TMP,
        protection::WORKSPACE_CONFIG_READ_ONLY,
        protection::LANDLOCK_FS,
        protection::SECCOMP,
        protection::SECCOMP_SUID_SGID,
        protection::SECCOMP_NAMESPACES,
        protection::SECCOMP_ADDRESS_FAMILIES,
        protection::NO_NEW_PRIVS,
        protection::NO_CAPABILITIES,
    ] {
        assert!(
            applied.iter().any(|a| a == layer),
            "{layer} missing from {applied:?}"
        );
    }
    assert!(not_applied.is_empty(), "{not_applied:?}");
    assert_nothing_alive(&marker, &[pid]);
}

#[tokio::test]
async fn workspace_and_private_tmp_are_writable() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let code = format!(
        "open('made.txt', 'w').write('in workspace')\nopen({:?} + '/t.txt', 'w').write('tmp')\nimport tempfile\ntempfile.mkstemp()\nprint(open('made.txt').read())",
        dirs.tmp.path().display().to_string()
    );
    let exit = run(&code, &dirs, strict(&dirs)).await;
    assert_eq!(stdout(&exit), "in workspace\n", "{exit:?}");
    assert_eq!(
        std::fs::read_to_string(dirs.workspace.path().join("made.txt")).unwrap(),
        "in workspace"
    );
}

fn write_outside(dirs: &Dirs) -> String {
    let target = dirs.outside.path().join("escaped.txt");
    probe(&format!(
        "open({:?}, 'w').write('x')",
        target.display().to_string()
    ))
}

#[tokio::test]
async fn writing_outside_the_workspace_is_denied_by_landlock() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    assert_layer_stops(
        &write_outside(&dirs),
        &dirs,
        "writing outside the workspace",
        |l| {
            l.landlock = false;
            l.filesystem_view = false;
        },
        |_| assert!(!dirs.outside.path().join("escaped.txt").exists()),
    )
    .await;
}

#[tokio::test]
async fn reading_outside_the_allowed_roots_is_denied_by_landlock() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let secret = dirs.outside.path().join("secret.txt");
    std::fs::write(&secret, "top secret").unwrap();
    let attempt = probe(&format!(
        "print(open({:?}).read(), end=' ')",
        secret.display().to_string()
    ));
    let exit = run(&attempt, &dirs, strict(&dirs)).await;
    assert_denied(&exit, "reading a file outside the allowed roots");
    assert!(!stdout(&exit).contains("top secret"));
    let control = run(
        &attempt,
        &dirs,
        without(strict(&dirs), |l| {
            l.landlock = false;
            l.filesystem_view = false;
        }),
    )
    .await;
    assert!(
        stdout(&control).contains("top secret"),
        "control: {:?}",
        stdout(&control)
    );
}

#[tokio::test]
async fn etc_shadow_is_not_readable() {
    if !needs_tool_sandbox() || !needs_file("/etc/shadow") {
        return;
    }
    let dirs = dirs();
    let exit = run(&probe("open('/etc/shadow').read()"), &dirs, strict(&dirs)).await;
    assert_denied(&exit, "reading /etc/shadow");
}

/// A stand-in for the supervisor: a process outside the sandbox whose
/// environment holds a secret. Killed and reaped on drop.
struct SecretHolder {
    child: Child,
}

impl SecretHolder {
    fn start(secret: &str, marker: &str) -> Self {
        let child = Command::new("/bin/sleep")
            .arg("60")
            .env("SUPERVISOR_SECRET", secret)
            .env(MARKER_VAR, marker)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        Self { child }
    }
}

impl Drop for SecretHolder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Python that looks for `secret` in every /proc/<pid>/environ, cmdline and
/// mem it can open, and tries the holder's files by pid.
fn proc_hunt(secret: &str, holder_pid: u32) -> String {
    // The secret is spelled backwards in the code, so the probe's own
    // command line does not count as a find.
    let reversed: String = secret.chars().rev().collect();
    format!(
        r#"import os
secret = {reversed:?}[::-1].encode()
found = []
for pid in os.listdir('/proc'):
    if not pid.isdigit():
        continue
    for name in ('environ', 'cmdline'):
        try:
            if secret in open(f'/proc/{{pid}}/{{name}}', 'rb').read():
                found.append(f'{{pid}}/{{name}}')
        except Exception:
            pass
for name in ('environ', 'mem', 'maps'):
    try:
        data = open(f'/proc/{holder_pid}/{{name}}', 'rb').read(4096)
        found.append(f'holder/{{name}}:{{len(data)}}')
    except Exception:
        pass
print('ESCAPED ' + ','.join(found) if found else 'DENIED nothing found')
"#
    )
}

#[tokio::test]
async fn other_processes_environ_and_mem_are_invisible() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let holder_marker = marker().await;
    let secret = format!("sk-planted-{}", std::process::id());
    let holder = SecretHolder::start(&secret, &holder_marker);
    let holder_pid = holder.child.id();
    let hunt = proc_hunt(&secret, holder_pid);
    // Three layers each keep the secret out of reach: the pid namespace
    // (the holder is not in the fresh /proc), Landlock (the host's /proc is
    // not among the readable paths) and the dropped capabilities (the
    // kernel refuses another process's environ and mem to a reader with
    // fewer capabilities). The control lifts all three.
    assert_layer_stops(
        &hunt,
        &dirs,
        "finding the planted secret under /proc",
        |l| {
            l.namespaces = false;
            l.landlock = false;
            l.capabilities = false;
        },
        |_| {},
    )
    .await;
    drop(holder);
    assert_nothing_alive(&holder_marker, &[holder_pid]);
}

#[tokio::test]
async fn the_fresh_proc_shows_only_the_tools_own_tree() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let code =
        "import os\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()), os.getpid())";
    let exit = run(code, &dirs, strict(&dirs)).await;
    assert_eq!(stdout(&exit), "[1] 1\n", "{exit:?}");
}

fn connect_to(port: u16) -> String {
    probe(&format!(
        "import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=5)\ns.close()"
    ))
}

async fn connect_attempt(dirs: &Dirs, isolation: Isolation) -> ChildExit {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    run(&connect_to(port), dirs, isolation).await
}

#[tokio::test]
async fn loopback_tcp_is_unreachable_with_network_off_and_reachable_with_it_on() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let off = connect_attempt(&dirs, strict(&dirs)).await;
    assert_denied(&off, "connecting to 127.0.0.1 with the network off");
    let mut on = strict(&dirs);
    on.network = true;
    let on = connect_attempt(&dirs, on).await;
    assert_escaped(&on, "connecting to 127.0.0.1 with the network on");
}

#[tokio::test]
async fn each_network_layer_alone_blocks_loopback_tcp() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let only = |namespaces, landlock, seccomp| {
        without(strict(&dirs), |l| {
            *l = Layers {
                namespaces,
                filesystem_view: namespaces,
                landlock,
                seccomp,
                capabilities: true,
            }
        })
    };
    let namespace_only = connect_attempt(&dirs, only(true, false, false)).await;
    assert_denied(&namespace_only, "connect with only the network namespace");
    let seccomp_only = connect_attempt(&dirs, only(false, false, true)).await;
    assert_denied(&seccomp_only, "connect with only the seccomp socket filter");
    assert!(
        stdout(&seccomp_only).contains("PermissionError"),
        "{seccomp_only:?}"
    );
    if needs_landlock_abi(4) {
        let landlock_only = connect_attempt(&dirs, only(false, true, false)).await;
        assert_denied(&landlock_only, "connect with only Landlock's TCP rules");
    }
    let none = connect_attempt(&dirs, only(false, false, false)).await;
    assert_escaped(&none, "connect with no network layer");
}

const PTRACE_TRACEME: &str = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nif libc.ptrace(0, 0, 0, 0) != 0:\n    raise OSError(ctypes.get_errno(), 'ptrace refused')";

const KEYCTL: &str = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nif libc.syscall(250, 0, -3, 0) < 0:\n    raise OSError(ctypes.get_errno(), 'keyctl refused')";

#[tokio::test]
async fn ptrace_and_keyctl_are_denied_by_seccomp() {
    if !needs_tool_sandbox() || !needs_x86_64() {
        return;
    }
    let dirs = dirs();
    for (name, attempt) in [("ptrace", PTRACE_TRACEME), ("keyctl", KEYCTL)] {
        assert_layer_stops(&probe(attempt), &dirs, name, |l| l.seccomp = false, |_| {}).await;
    }
}

#[tokio::test]
async fn the_tool_process_has_no_capabilities() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let code = "for line in open('/proc/self/status'):\n    if line.startswith(('CapEff', 'CapPrm', 'CapBnd', 'NoNewPrivs')):\n        print(line.split()[0], int(line.split()[1], 16))";
    let exit = run(code, &dirs, strict(&dirs)).await;
    assert_eq!(
        stdout(&exit),
        "CapPrm: 0\nCapEff: 0\nCapBnd: 0\nNoNewPrivs: 1\n",
        "{exit:?}"
    );
}

#[tokio::test]
async fn a_switched_off_layer_is_reported_not_applied() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let marker = marker().await;
    let isolation = without(strict(&dirs), |l| l.seccomp = false);
    let child = spawn(python_spec("pass", &dirs, &marker, isolation))
        .await
        .unwrap();
    let not_applied: Vec<String> = child
        .status()
        .not_applied
        .iter()
        .map(|n| format!("{}: {}", n.protection, n.reason))
        .collect();
    let pid = child.pid();
    finish(child).await;
    assert_eq!(
        not_applied,
        [
            "seccomp",
            "seccomp_suid_sgid",
            "seccomp_namespaces",
            "seccomp_address_families"
        ]
        .map(|name| format!("{name}: switched off by the caller"))
    );
    assert_nothing_alive(&marker, &[pid]);
}

/// What `RequireAll` says when asked to spawn with `layer_off` applied
/// (it must refuse: nothing is started).
async fn require_all_refusal(dirs: &Dirs, layer_off: impl FnOnce(&mut Layers)) -> String {
    let marker = marker().await;
    let mut spec = python_spec("pass", dirs, &marker, without(strict(dirs), layer_off));
    spec.policy = subagent_sandbox::SandboxPolicy::RequireAll;
    let error = spawn(spec).await.unwrap_err().to_string();
    assert!(error.contains("refusing to run unsandboxed"), "{error}");
    error
}

#[tokio::test]
async fn require_all_refuses_a_switched_off_layer() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let error = require_all_refusal(&dirs, |l| l.landlock = false).await;
    assert!(error.contains("landlock_fs"), "{error}");
}

#[tokio::test]
async fn require_all_refuses_a_missing_filesystem_view() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let error = require_all_refusal(&dirs, |l| l.filesystem_view = false).await;
    for layer in [
        protection::FILESYSTEM_VIEW,
        protection::PRIVATE_TMP,
        protection::WORKSPACE_CONFIG_READ_ONLY,
    ] {
        assert!(error.contains(layer), "{layer}: {error}");
    }
    // The view needs the namespaces: without them it is refused too, and
    // says why.
    let status = subagent_sandbox::isolation_status(&without(strict(&dirs), |l| {
        l.namespaces = false;
    }));
    let view = status
        .not_applied
        .iter()
        .find(|n| n.protection == protection::FILESYSTEM_VIEW)
        .unwrap_or_else(|| panic!("{status:?}"));
    assert!(view.reason.contains("needs the namespaces"), "{view:?}");
}
