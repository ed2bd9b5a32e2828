//! Exit codes, signals and spawn errors are reported as the leader ended.

use subagent_sandbox::{RawExit, SpawnError, Termination, protection, spawn};

use super::support::{assert_nothing_alive, finish, marker, sh};

#[tokio::test]
async fn exit_code_and_both_streams_are_reported() {
    let marker = marker().await;
    let child = spawn(sh("echo out; echo err >&2; exit 7", &marker, &[]))
        .await
        .unwrap();
    let pid = child.pid();
    for name in [
        protection::PROCESS_GROUP,
        protection::ENV_CLEARED,
        protection::STDIN_NULL,
        protection::PARENT_DEATH_SIGNAL,
        protection::RLIMIT_CORE,
    ] {
        assert!(
            child.status().applied.iter().any(|a| a == name),
            "{name} missing"
        );
    }
    let exit = finish(child).await;
    assert_eq!(exit.termination, Termination::Exited { code: 7 });
    assert_eq!(exit.raw, RawExit::Exited(7));
    assert_eq!(exit.stdout.lossy_text(), "out\n");
    assert_eq!(exit.stderr.lossy_text(), "err\n");
    assert!(!exit.stdout.truncated && exit.stdout.bytes_seen == 4);
    assert!(exit.leaked_pids.is_empty());
    assert!(!exit.termination.is_success());
    assert_nothing_alive(&marker, &[pid]);
}

#[tokio::test]
async fn clean_exit_is_success() {
    let marker = marker().await;
    let child = spawn(sh("exit 0", &marker, &[])).await.unwrap();
    let pid = child.pid();
    let exit = finish(child).await;
    assert!(exit.termination.is_success(), "{:?}", exit.termination);
    assert!(exit.usage.wall > std::time::Duration::ZERO);
    assert_nothing_alive(&marker, &[pid]);
}

#[tokio::test]
async fn segfault_is_reported_as_signaled_without_a_core_file() {
    let marker = marker().await;
    let dir = tempfile::tempdir().unwrap();
    let mut spec = sh("kill -SEGV $$", &marker, &[]);
    spec.cwd = dir.path().to_path_buf();
    let child = spawn(spec).await.unwrap();
    let pid = child.pid();
    let exit = finish(child).await;
    assert_eq!(
        exit.termination,
        Termination::Signaled {
            signal: libc::SIGSEGV
        }
    );
    assert_eq!(exit.raw, RawExit::Signaled(libc::SIGSEGV));
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(
        files.is_empty(),
        "RLIMIT_CORE 0 must prevent core files: {files:?}"
    );
    assert_nothing_alive(&marker, &[pid]);
}

#[tokio::test]
async fn abort_is_reported_as_signaled() {
    let marker = marker().await;
    let child = spawn(sh("kill -ABRT $$", &marker, &[])).await.unwrap();
    let pid = child.pid();
    let exit = finish(child).await;
    assert_eq!(
        exit.termination,
        Termination::Signaled {
            signal: libc::SIGABRT
        }
    );
    assert_eq!(exit.termination.reason(), "signaled");
    assert_nothing_alive(&marker, &[pid]);
}

#[tokio::test]
async fn missing_program_is_a_spawn_error_that_says_what_to_check() {
    let marker = marker().await;
    let mut spec = sh("", &marker, &[]);
    spec.program = format!("/nonexistent/{marker}").into();
    let err = spawn(spec).await.unwrap_err();
    assert!(matches!(err, SpawnError::Spawn { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.starts_with("failed to start /nonexistent/"), "{text}");
    assert!(text.contains("check the path"), "{text}");
    assert_nothing_alive(&marker, &[]);
}

#[tokio::test]
async fn missing_working_directory_is_reported_before_anything_starts() {
    let marker = marker().await;
    let mut spec = sh("exit 0", &marker, &[]);
    spec.cwd = format!("/nonexistent/{marker}").into();
    let err = spawn(spec).await.unwrap_err();
    assert!(matches!(err, SpawnError::Cwd { .. }), "{err:?}");
    assert!(
        err.to_string().contains("create it or pick another"),
        "{err}"
    );
    assert_nothing_alive(&marker, &[]);
}

/// The child starts with every signal at its default disposition and none
/// blocked, whatever the supervisor ignores (Rust ignores SIGPIPE) or
/// blocks while it starts the child.
#[tokio::test]
async fn the_child_starts_with_default_signals_and_an_empty_mask() {
    let marker = marker().await;
    let mut spec = sh("", &marker, &[]);
    spec.program = "/bin/grep".into();
    spec.args = vec![
        "-E".into(),
        "^Sig(Ign|Blk):".into(),
        "/proc/self/status".into(),
    ];
    let exit = finish(spawn(spec).await.unwrap()).await;
    assert!(exit.termination.is_success(), "{:?}", exit.termination);
    assert_eq!(
        exit.stdout.lossy_text(),
        "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n"
    );
}
