//! The tool sandbox's second wall through the real CLI: a scripted model
//! makes `python_execute` try what issue 18 found getting through (host
//! metadata, a setuid file, a host unix socket, host SysV IPC, a nested
//! namespace, other socket families, the workspace's configuration), and
//! the test checks both what the model was told and what the host kept.
//! The attacks on what lies outside the workspace (metadata, a host socket,
//! SysV IPC) are made through `bash` too ([`ProcessTool`]), which runs in
//! the same sandbox.
//! The sandbox crate's suite shows each attempt succeeding with its layer
//! switched off.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use serde_json::json;

use super::python_call::{ProcessTool, process_call, python_call, python_tries};
use super::scripted_model::{ScriptedModel, text_turn, tool_call_turn};
use super::support::{binary, checked, make_fifo, of_type, sandbox_layers};
use super::tools_e2e::{Workspace, run_cli};

#[test]
fn metadata_of_a_host_file_outside_the_workspace_is_out_of_reach() {
    for tool in ProcessTool::ALL {
        let workspace = Workspace::new();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret.txt");
        std::fs::write(&secret, "top secret").unwrap();
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
        let before = std::fs::metadata(&secret).unwrap();
        let path = format!("{:?}", secret.display().to_string());
        let (output, lines) = process_call(
            tool,
            workspace.path(),
            &python_tries(&[
                ("chmod", format!("os.chmod({path}, 0o666)")),
                ("setuid", format!("os.chmod({path}, 0o4755)")),
                ("utime", format!("os.utime({path}, (0, 0))")),
                ("setxattr", format!("os.setxattr({path}, 'user.x', b'1')")),
                ("stat", format!("os.stat({path})")),
                ("read", format!("open({path}).read()")),
            ]),
        );
        for name in ["chmod", "utime", "setxattr", "stat", "read"] {
            assert!(
                output.contains(&format!("{name} FileNotFoundError")),
                "{name}: {output}"
            );
        }
        // The seccomp filter answers before the path is even looked up.
        assert!(output.contains("setuid PermissionError"), "{output}");
        let after = std::fs::metadata(&secret).unwrap();
        assert_eq!(after.mode(), before.mode());
        assert_eq!(after.mtime(), before.mtime());
        // The header says which layers the tool processes got.
        let applied = sandbox_layers(&lines[0]);
        for layer in [
            "ipc_namespace",
            "uts_namespace",
            "cgroup_namespace",
            "filesystem_view",
            "private_tmp",
            "workspace_config_read_only",
            "seccomp_suid_sgid",
            "seccomp_namespaces",
            "seccomp_address_families",
        ] {
            assert!(applied.contains(&layer), "{layer} not in {applied:?}");
        }
    }
}

#[test]
fn a_setuid_copy_of_id_cannot_be_made_in_the_workspace() {
    let workspace = Workspace::new();
    let (output, _) = python_call(
        workspace.path(),
        "import os, shutil\nshutil.copy('/usr/bin/id', 'id')\nos.chmod('id', 0o4755)",
    );
    assert!(output.contains("PermissionError"), "{output}");
    let mode = std::fs::metadata(workspace.path().join("id"))
        .unwrap()
        .mode();
    assert_eq!(mode & 0o6000, 0, "mode {mode:o}");
}

#[test]
fn a_host_unix_socket_outside_the_workspace_is_unreachable() {
    for tool in ProcessTool::ALL {
        let workspace = Workspace::new();
        let outside = tempfile::tempdir().unwrap();
        let socket = outside.path().join("engine.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        listener.set_nonblocking(true).unwrap();
        let (output, _) = process_call(
            tool,
            workspace.path(),
            &format!(
                "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({:?})\nprint('connected')",
                socket.display().to_string()
            ),
        );
        assert!(!output.contains("connected"), "{output}");
        assert!(output.contains("FileNotFoundError"), "{output}");
        assert!(
            listener.accept().is_err(),
            "a connection reached the host socket"
        );
    }
}

#[test]
fn host_sysv_shared_memory_is_not_visible() {
    for tool in ProcessTool::ALL {
        let workspace = Workspace::new();
        let key: libc::key_t = 0x5b00_0000 | i32::try_from(std::process::id() & 0xffff).unwrap();
        // SAFETY: plain SysV calls on a segment of our own, removed below.
        let id = unsafe { libc::shmget(key, 4096, libc::IPC_CREAT | libc::IPC_EXCL | 0o600) };
        assert!(id >= 0, "shmget: {}", std::io::Error::last_os_error());
        let (output, _) = process_call(
            tool,
            workspace.path(),
            &format!(
                "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nprint('shmget', libc.shmget({key}, 0, 0), ctypes.get_errno())"
            ),
        );
        // SAFETY: removes the segment made above.
        unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
        assert!(
            output.contains(&format!("shmget -1 {}", libc::ENOENT)),
            "{output}"
        );
    }
}

#[test]
fn a_host_sysv_message_queue_is_not_visible() {
    for tool in ProcessTool::ALL {
        let workspace = Workspace::new();
        let key: libc::key_t = 0x5c00_0000 | i32::try_from(std::process::id() & 0xffff).unwrap();
        // SAFETY: plain SysV calls on a queue of our own, removed below.
        let id = unsafe { libc::msgget(key, libc::IPC_CREAT | libc::IPC_EXCL | 0o600) };
        assert!(id >= 0, "msgget: {}", std::io::Error::last_os_error());
        let (output, _) = process_call(
            tool,
            workspace.path(),
            &format!(
                "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nprint('msgget', libc.msgget({key}, 0), ctypes.get_errno())"
            ),
        );
        // SAFETY: removes the queue made above.
        unsafe { libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
        assert!(
            output.contains(&format!("msgget -1 {}", libc::ENOENT)),
            "{output}"
        );
    }
}

#[test]
fn ignore_files_that_lead_out_block_or_never_end_are_skipped_and_said_so() {
    // What a tool of an earlier run (or a hostile repository) can leave:
    // a .gitignore linked to a host file (its lines would become rules: an
    // oracle for which host paths exist), a FIFO .gitignore (a walk that
    // opens it blocks) and an .ignore linked to /dev/zero (endless).
    let workspace = Workspace::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("rules"), "visible.txt\n").unwrap();
    let ws = workspace.path();
    std::fs::write(ws.join("visible.txt"), "needle\n").unwrap();
    std::fs::remove_file(ws.join(".gitignore")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("rules"), ws.join(".gitignore")).unwrap();
    std::fs::create_dir(ws.join("sub")).unwrap();
    std::fs::write(ws.join("sub/also.txt"), "needle\n").unwrap();
    make_fifo(&ws.join("sub/.gitignore"));
    std::fs::create_dir(ws.join("deep")).unwrap();
    std::fs::write(ws.join("deep/third.txt"), "needle\n").unwrap();
    std::os::unix::fs::symlink("/dev/zero", ws.join("deep/.ignore")).unwrap();
    binary("subagent");
    let sessions = tempfile::tempdir().unwrap();
    let model = ScriptedModel::start(vec![
        tool_call_turn("call_find", "bash_find", &json!({ "pattern": "**/*.txt" })),
        tool_call_turn("call_grep", "bash_ripgrep", &json!({ "pattern": "needle" })),
        text_turn("done"),
    ]);
    let out = run_cli(
        &model,
        &workspace,
        sessions.path(),
        &["--tools", "bash_find,bash_ripgrep", "--task", "Look."],
    );
    let (_, lines) = checked(&out, 0);
    let results = of_type(&lines, "tool_result");
    assert_eq!(results.len(), 2, "{lines:#?}");
    for result in results {
        let output = result["output"].as_str().unwrap();
        // Every file is found: no rule from the linked host file applied.
        for name in ["visible.txt", "also.txt", "third.txt"] {
            assert!(output.contains(name), "{name} missing: {output}");
        }
        assert!(output.contains("ignore files not applied"), "{output}");
        assert!(output.contains("a symlink"), "{output}");
    }
    // A FIFO that blocked the walk would have ended the run by its
    // timeout, not with exit 0 (checked above).
}

#[test]
fn nested_namespaces_and_other_socket_families_are_refused() {
    let workspace = Workspace::new();
    let (output, _) = python_call(
        workspace.path(),
        &python_tries(&[
            (
                "unshare",
                "assert ctypes.CDLL(None).unshare(0x10000000 | 0x40000000) == 0",
            ),
            ("vsock", "socket.socket(40, socket.SOCK_STREAM)"),
            ("netlink", "socket.socket(16, socket.SOCK_RAW)"),
            ("packet", "socket.socket(17, socket.SOCK_RAW)"),
            ("alg", "socket.socket(38, socket.SOCK_SEQPACKET)"),
            ("memfd_exec", "os.memfd_create('x', 0x10)"),
            ("etc_ssl_private", "os.listdir('/etc/ssl/private')"),
        ]),
    );
    assert!(output.contains("unshare AssertionError"), "{output}");
    for name in ["vsock", "netlink", "packet", "alg"] {
        assert!(output.contains(&format!("{name} OSError")), "{output}");
    }
    assert!(output.contains("memfd_exec PermissionError"), "{output}");
    assert!(
        output.contains("etc_ssl_private FileNotFoundError"),
        "{output}"
    );
}

#[test]
fn the_workspaces_configuration_and_git_hooks_stay_read_only() {
    let workspace = Workspace::new();
    for dir in [".subagent/agents", ".claude/agents", ".git/hooks"] {
        std::fs::create_dir_all(workspace.path().join(dir)).unwrap();
    }
    let written = [
        ".subagent/config.toml",
        ".subagent/agents/x.md",
        ".claude/agents/x.md",
        ".git/hooks/pre-commit",
    ];
    let attempts: Vec<(&str, String)> = written
        .iter()
        .map(|p| (*p, format!("open({p:?}, 'w').write('planted')")))
        .chain([("rename_git", "os.rename('.git', 'moved')".to_owned())])
        .collect();
    let (output, _) = python_call(workspace.path(), &python_tries(&attempts));
    for path in written {
        assert!(output.contains(&format!("{path} OSError")), "{output}");
        assert!(!workspace.path().join(path).exists(), "{path} was written");
    }
    assert!(output.contains("rename_git OSError"), "{output}");
    assert!(Path::new(&workspace.path().join(".git/hooks")).is_dir());
}
