//! What the child inherits: exactly the given environment, stdin from
//! /dev/null, the protocol socket as fd 3 and no other descriptor.

use std::os::fd::{FromRawFd, OwnedFd};

use subagent_sandbox::{DEFAULT_ENV_ALLOWLIST, Termination, allowlisted_env, spawn};

use super::support::{
    MARKER_VAR, assert_nothing_alive, finish, marker, protocol_pair, read_until, sh,
};

#[tokio::test]
async fn environment_is_exactly_the_given_one() {
    assert!(
        std::env::var_os("PATH").is_some(),
        "precondition: the parent has PATH"
    );
    let marker = marker().await;
    let mut spec = sh("", &marker, &[]);
    spec.program = "/usr/bin/env".into();
    spec.args = vec![];
    spec.env = vec![
        (MARKER_VAR.into(), marker.to_string().into()),
        ("ONLY_THIS".into(), "yes".into()),
    ];
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    let exit = finish(child).await;
    let mut lines: Vec<String> = exit.stdout.lossy_text().lines().map(String::from).collect();
    lines.sort();
    assert_eq!(
        lines,
        vec![
            "ONLY_THIS=yes".to_string(),
            format!("{MARKER_VAR}={marker}")
        ]
    );
    assert_nothing_alive(&marker, &[pid]);
}

#[test]
fn allowlisted_env_keeps_only_listed_names() {
    let path = std::env::var_os("PATH").expect("precondition: the parent has PATH");
    let got = allowlisted_env(&["PATH", "SANDBOX_TEST_SURELY_UNSET"]);
    assert_eq!(got, vec![("PATH".into(), path)]);
    let defaults = allowlisted_env(DEFAULT_ENV_ALLOWLIST);
    assert!(
        defaults
            .iter()
            .all(|(k, _)| DEFAULT_ENV_ALLOWLIST.iter().any(|a| k == a))
    );
}

#[tokio::test]
async fn protocol_fd_is_fd_3_and_no_other_fd_is_inherited() {
    // An inheritable fd (no CLOEXEC) in the parent that must not leak.
    // SAFETY: plain open(2); the fd is owned right away.
    let raw = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY) };
    assert!(raw >= 0);
    // SAFETY: `raw` was just opened and is owned by nobody else.
    let inheritable = unsafe { OwnedFd::from_raw_fd(raw) };
    let marker = marker().await;
    let (theirs, mut ours) = protocol_pair();
    let mut spec = sh(
        "ls /proc/$$/fd; readlink /proc/$$/fd/0; echo hello >&3",
        &marker,
        &[],
    );
    spec.protocol_fd = Some(theirs);
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    assert!(read_until(&mut ours, "hello").await.contains("hello"));
    let exit = finish(child).await;
    assert_eq!(exit.termination, Termination::Exited { code: 0 });
    assert_eq!(exit.stdout.lossy_text(), "0\n1\n2\n3\n/dev/null\n");
    drop(inheritable);
    assert_nothing_alive(&marker, &[pid]);
}

#[tokio::test]
async fn without_a_protocol_fd_only_stdio_is_open() {
    let marker = marker().await;
    let child = spawn(sh("ls /proc/$$/fd", &marker, &[])).await.unwrap();
    let pid = child.pid();
    let exit = finish(child).await;
    assert_eq!(exit.stdout.lossy_text(), "0\n1\n2\n");
    assert_nothing_alive(&marker, &[pid]);
}

#[tokio::test]
async fn protocol_socket_reaches_eof_once_the_child_is_gone() {
    let marker = marker().await;
    let (theirs, mut ours) = protocol_pair();
    let mut spec = sh("exit 0", &marker, &[]);
    spec.protocol_fd = Some(theirs);
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    finish(child).await;
    // The parent's copy of the child's end was closed at spawn: EOF, not a hang.
    let mut buf = [0u8; 8];
    let n = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        use tokio::io::AsyncReadExt;
        ours.read(&mut buf).await
    })
    .await
    .expect("EOF within 5 s")
    .unwrap();
    assert_eq!(n, 0);
    assert_nothing_alive(&marker, &[pid]);
}
