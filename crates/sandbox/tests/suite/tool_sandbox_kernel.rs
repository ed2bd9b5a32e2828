//! The tool sandbox against attacks on the kernel's shared objects rather
//! than files: host SysV IPC (the IPC namespace), nested namespaces, socket
//! families, setuid modes and executable memfds (the seccomp filter). Each
//! is denied with every layer on, and a control with the layer switched off
//! shows the same probe getting through.

use std::os::unix::fs::PermissionsExt;

use super::support::{needs_tool_sandbox, needs_x86_64};
use super::tool_sandbox_support::{
    assert_denied, assert_layer_stops, dirs, probe, run, stdout, strict, without,
};

/// A SysV key of this test process, so parallel runs do not meet.
fn ipc_key(salt: i32) -> libc::key_t {
    let pid = i32::try_from(std::process::id()).unwrap();
    0x5a00_0000 | ((pid & 0xffff) << 4) | salt
}

/// A host shared-memory segment holding `content`, removed on drop.
struct HostShm {
    id: libc::c_int,
}

impl HostShm {
    fn new(key: libc::key_t, content: &[u8]) -> Self {
        // SAFETY: plain SysV calls; the segment is written within its size
        // and detached before use elsewhere.
        unsafe {
            let id = libc::shmget(key, 4096, libc::IPC_CREAT | libc::IPC_EXCL | 0o600);
            assert!(id >= 0, "shmget: {}", std::io::Error::last_os_error());
            let addr = libc::shmat(id, std::ptr::null(), 0);
            assert_ne!(addr as isize, -1, "shmat");
            std::ptr::copy_nonoverlapping(content.as_ptr(), addr.cast::<u8>(), content.len());
            libc::shmdt(addr);
            Self { id }
        }
    }
}

impl Drop for HostShm {
    fn drop(&mut self) {
        // SAFETY: removes our own segment.
        unsafe {
            libc::shmctl(self.id, libc::IPC_RMID, std::ptr::null_mut());
        }
    }
}

/// A host message queue holding one message, removed on drop.
struct HostQueue {
    id: libc::c_int,
}

#[repr(C)]
struct Message {
    mtype: libc::c_long,
    text: [u8; 16],
}

impl HostQueue {
    fn new(key: libc::key_t, text: &[u8; 16]) -> Self {
        // SAFETY: plain SysV calls with a message that lives for the call.
        unsafe {
            let id = libc::msgget(key, libc::IPC_CREAT | libc::IPC_EXCL | 0o600);
            assert!(id >= 0, "msgget: {}", std::io::Error::last_os_error());
            let message = Message {
                mtype: 1,
                text: *text,
            };
            let sent = libc::msgsnd(id, (&raw const message).cast(), 16, 0);
            assert_eq!(sent, 0, "msgsnd: {}", std::io::Error::last_os_error());
            Self { id }
        }
    }

    fn messages(&self) -> u64 {
        // SAFETY: msqid_ds is plain data that IPC_STAT fills.
        unsafe {
            let mut ds: libc::msqid_ds = std::mem::zeroed();
            assert_eq!(libc::msgctl(self.id, libc::IPC_STAT, &mut ds), 0);
            ds.msg_qnum
        }
    }
}

impl Drop for HostQueue {
    fn drop(&mut self) {
        // SAFETY: removes our own queue.
        unsafe {
            libc::msgctl(self.id, libc::IPC_RMID, std::ptr::null_mut());
        }
    }
}

#[tokio::test]
async fn host_sysv_shared_memory_is_not_visible() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let key = ipc_key(1);
    let _shm = HostShm::new(key, b"host-shm-secret");
    let attempt = probe(&format!(
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.shmat.restype = ctypes.c_void_p\nid = libc.shmget({key}, 0, 0)\nif id < 0:\n    raise OSError(ctypes.get_errno(), 'shmget')\naddr = libc.shmat(id, None, 0o10000)\nif ctypes.string_at(addr, 15) != b'host-shm-secret':\n    raise ValueError('not the host segment')"
    ));
    assert_layer_stops(
        &attempt,
        &dirs,
        "reading a host shared-memory segment",
        |l| l.namespaces = false,
        |_| {},
    )
    .await;
}

#[tokio::test]
async fn a_host_message_queue_is_not_visible() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let key = ipc_key(2);
    let queue = HostQueue::new(key, b"host-queue-msg!!");
    let attempt = probe(&format!(
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nid = libc.msgget({key}, 0)\nif id < 0:\n    raise OSError(ctypes.get_errno(), 'msgget')\nbuf = ctypes.create_string_buffer(64)\nif libc.msgrcv(id, buf, 16, 0, 0o4000) < 0:\n    raise OSError(ctypes.get_errno(), 'msgrcv')"
    ));
    assert_layer_stops(
        &attempt,
        &dirs,
        "taking a host queue's message",
        |l| l.namespaces = false,
        |_| assert_eq!(queue.messages(), 1),
    )
    .await;
    assert_eq!(queue.messages(), 0);
}

#[tokio::test]
async fn a_nested_user_and_network_namespace_is_refused() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let attempt = probe(
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nif libc.unshare(0x10000000 | 0x40000000) != 0:\n    raise OSError(ctypes.get_errno(), 'unshare refused')",
    );
    assert_layer_stops(
        &attempt,
        &dirs,
        "a nested user namespace",
        |l| l.seccomp = false,
        |exit| assert!(stdout(exit).contains("Errno 1]"), "{exit:?}"),
    )
    .await;
}

/// Python that opens a socket of each family and prints `name errno` (0
/// when it opened).
fn open_families(families: &[(&str, i32, i32)]) -> String {
    let list: Vec<String> = families
        .iter()
        .map(|(name, family, kind)| format!("({name:?}, {family}, {kind})"))
        .collect();
    format!(
        "import socket\nfor name, family, kind in [{}]:\n    try:\n        socket.socket(family, kind).close()\n        print(name, 0)\n    except OSError as e:\n        print(name, e.errno)",
        list.join(", ")
    )
}

const FAMILIES: [(&str, i32, i32); 4] = [
    ("vsock", libc::AF_VSOCK, libc::SOCK_STREAM),
    ("netlink", libc::AF_NETLINK, libc::SOCK_RAW),
    ("packet", libc::AF_PACKET, libc::SOCK_RAW),
    ("alg", libc::AF_ALG, libc::SOCK_SEQPACKET),
];

#[tokio::test]
async fn vsock_netlink_packet_and_alg_sockets_are_refused() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let code = open_families(&FAMILIES);
    let exit = run(&code, &dirs, strict(&dirs)).await;
    let refused = format!("{}", libc::EAFNOSUPPORT);
    for line in stdout(&exit).lines() {
        assert!(line.ends_with(&refused), "{line}: {exit:?}");
    }
    assert_eq!(stdout(&exit).lines().count(), 4, "{exit:?}");
    // Without the filter, the families this kernel has open: vsock and
    // netlink need no capability (packet needs CAP_NET_RAW, which the tool
    // lacks; alg needs CONFIG_CRYPTO_USER_API).
    let control = run(&code, &dirs, without(strict(&dirs), |l| l.seccomp = false)).await;
    let opened = stdout(&control);
    assert!(opened.contains("netlink 0\n"), "{control:?}");
    assert!(
        opened.contains("vsock 0\n") || opened.contains("vsock 97\n"),
        "{control:?}"
    );
}

#[tokio::test]
async fn unix_sockets_still_work() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let code = "import socket\na, b = socket.socketpair()\na.sendall(b'ok')\nprint(b.recv(2).decode())\ns = socket.socket(socket.AF_UNIX)\ns.bind('local.sock')\ns.listen()\nprint('bound')";
    let exit = run(code, &dirs, strict(&dirs)).await;
    assert_eq!(stdout(&exit), "ok\nbound\n", "{exit:?}");
}

#[tokio::test]
async fn a_setuid_file_made_in_the_workspace_is_refused() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let copy = dirs.workspace.path().join("id");
    let attempt =
        probe("import os, shutil\nshutil.copy('/usr/bin/id', 'id')\nos.chmod('id', 0o4755)");
    assert_layer_stops(
        &attempt,
        &dirs,
        "a setuid copy of id",
        |l| l.seccomp = false,
        |_| {
            let mode = std::fs::metadata(&copy).unwrap().permissions().mode();
            assert_eq!(mode & 0o6000, 0, "mode {mode:o}");
            std::fs::remove_file(&copy).unwrap();
        },
    )
    .await;
    let mode = std::fs::metadata(&copy).unwrap().permissions().mode();
    assert_eq!(mode & 0o4000, 0o4000, "mode {mode:o}");
}

#[tokio::test]
async fn creating_a_setgid_directory_or_file_is_refused() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    for attempt in [
        "import os\nos.mkdir('d', 0o2755)",
        "import os\nos.close(os.open('f', os.O_CREAT | os.O_WRONLY, 0o4755))",
    ] {
        let exit = run(&probe(attempt), &dirs, strict(&dirs)).await;
        assert_denied(&exit, attempt);
    }
    // A plain file and directory are fine.
    let exit = run(
        "import os\nos.mkdir('d', 0o755)\nos.close(os.open('f', os.O_CREAT | os.O_WRONLY, 0o644))\nprint('made')",
        &dirs,
        strict(&dirs),
    )
    .await;
    assert_eq!(stdout(&exit), "made\n", "{exit:?}");
}

#[tokio::test]
async fn an_executable_memfd_is_refused() {
    if !needs_tool_sandbox() || !needs_x86_64() {
        return;
    }
    let dirs = dirs();
    // MFD_EXEC = 0x10.
    let attempt = probe("import os\nos.close(os.memfd_create('x', 0x10))");
    assert_layer_stops(
        &attempt,
        &dirs,
        "memfd_create(MFD_EXEC)",
        |l| l.seccomp = false,
        |_| {},
    )
    .await;
}

#[tokio::test]
async fn threads_and_subprocesses_work_through_the_clone3_fallback() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let code = "import subprocess, threading\nt = threading.Thread(target=lambda: None)\nt.start()\nt.join()\nprint(subprocess.run(['/bin/echo', 'child'], capture_output=True, text=True).stdout, end='')";
    let exit = run(code, &dirs, strict(&dirs)).await;
    assert_eq!(stdout(&exit), "child\n", "{exit:?}");
}

#[tokio::test]
async fn openat2_cannot_create_a_setuid_file_behind_the_filters_back() {
    if !needs_tool_sandbox() || !needs_x86_64() {
        return;
    }
    let dirs = dirs();
    // struct open_how { flags, mode, resolve }: the mode is out of a
    // filter's reach, so openat2 must not run at all.
    let attempt = probe(
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nhow = (ctypes.c_uint64 * 3)(os.O_CREAT | os.O_WRONLY, 0o4755, 0)\nfd = libc.syscall(437, -100, b'suid', ctypes.byref(how), 24)\nif fd < 0:\n    raise OSError(ctypes.get_errno(), 'openat2 refused')\nif os.stat('suid').st_mode & 0o4000 == 0:\n    raise ValueError('made without the setuid bit')",
    );
    assert_layer_stops(
        &attempt,
        &dirs,
        "openat2 with a setuid mode",
        |l| l.seccomp = false,
        |exit| assert!(stdout(exit).contains("Errno 38]"), "ENOSYS: {exit:?}"),
    )
    .await;
}

#[tokio::test]
async fn clone3_cannot_make_a_namespace_behind_the_filters_back() {
    if !needs_tool_sandbox() || !needs_x86_64() {
        return;
    }
    let dirs = dirs();
    // struct clone_args: flags at 0, exit_signal at word 4; the flags are
    // out of a filter's reach, so clone3 must not run at all.
    let attempt = probe(
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nargs = (ctypes.c_uint64 * 11)()\nargs[0] = 0x10000000 | 0x40000000\nargs[4] = 17\npid = libc.syscall(435, ctypes.byref(args), 88)\nif pid == 0:\n    os._exit(0)\nif pid < 0:\n    raise OSError(ctypes.get_errno(), 'clone3 refused')\nos.waitpid(pid, 0)",
    );
    assert_layer_stops(
        &attempt,
        &dirs,
        "clone3 into a new user namespace",
        |l| l.seccomp = false,
        |exit| assert!(stdout(exit).contains("Errno 38]"), "ENOSYS: {exit:?}"),
    )
    .await;
}

#[tokio::test]
async fn every_namespace_is_the_tools_own_and_its_cgroup_is_its_root() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let kinds = ["user", "pid", "mnt", "net", "ipc", "uts", "cgroup"];
    let code = format!(
        "import os\nfor kind in {kinds:?}:\n    print(kind, os.readlink('/proc/self/ns/' + kind))\nprint(all(line.rstrip().endswith(':/') for line in open('/proc/self/cgroup')))"
    );
    let exit = run(&code, &dirs, strict(&dirs)).await;
    let out = stdout(&exit);
    for kind in kinds {
        let host = std::fs::read_link(format!("/proc/self/ns/{kind}")).unwrap();
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("{kind} ")))
            .unwrap_or_else(|| panic!("no {kind} in {exit:?}"));
        assert_ne!(
            line,
            format!("{kind} {}", host.display()),
            "the tool shares the host's {kind} namespace"
        );
    }
    assert!(out.ends_with("True\n"), "the cgroup namespace: {out}");
}
