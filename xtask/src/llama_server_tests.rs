use std::os::unix::process::ExitStatusExt;

use super::*;

fn server() -> &'static Path {
    Path::new("/cache/llama-server-x/bin/llama-server")
}

#[test]
fn sigill_is_one_line_naming_the_signal_the_cause_and_the_fix() {
    let line = explain_exit(server(), ExitStatus::from_raw(4));
    assert!(!line.contains('\n'), "{line}");
    assert!(line.contains("died of SIGILL"), "{line}");
    assert!(
        line.contains("CPU instruction this machine does not allow"),
        "{line}"
    );
    assert!(
        line.contains("cargo xtask local-model install --rebuild"),
        "{line}"
    );
    assert!(
        line.contains("/cache/llama-server-x/bin/llama-server"),
        "{line}"
    );
}

#[test]
fn other_signals_are_named_with_their_own_cause() {
    let killed = explain_exit(server(), ExitStatus::from_raw(9));
    assert!(
        killed.contains("SIGKILL") && killed.contains("memory"),
        "{killed}"
    );
    let segv = explain_exit(server(), ExitStatus::from_raw(11));
    assert!(
        segv.contains("SIGSEGV") && segv.contains("crashed"),
        "{segv}"
    );
    let unnamed = explain_exit(server(), ExitStatus::from_raw(31));
    assert!(unnamed.contains("signal 31"), "{unnamed}");
}

#[test]
fn an_exit_status_is_not_called_a_signal() {
    let line = explain_exit(server(), ExitStatus::from_raw(1 << 8));
    assert!(line.contains("exited during startup"), "{line}");
    assert!(!line.contains("died of"), "{line}");
}

#[test]
fn the_server_runs_from_its_own_directory_on_loopback() {
    let command = command(server(), Path::new("/m.gguf"), 8080);
    assert_eq!(
        command.get_current_dir(),
        Some(Path::new("/cache/llama-server-x/bin"))
    );
    let args: Vec<_> = command.get_args().map(|a| a.to_string_lossy()).collect();
    let host = args.iter().position(|a| a == "--host").unwrap();
    assert_eq!(args[host + 1], "127.0.0.1");
}

/// A stand-in server: a shell script with `body`, in a fresh directory.
fn stand_in(body: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("llama-server");
    std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, script)
}

#[test]
fn a_server_that_dies_of_sigill_at_start_is_explained_in_one_line() {
    let (dir, script) = stand_in("echo loading; kill -s ILL $$");
    let log = dir.path().join("server.log");
    let error = RunningServer::start(&script, Path::new("/m.gguf"), &log)
        .unwrap_err()
        .to_string();
    assert!(error.contains("died of SIGILL"), "{error}");
    assert!(!error.contains('\n'), "{error}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "loading\n");
}

#[test]
fn a_server_that_refuses_to_start_shows_its_last_words() {
    let (dir, script) = stand_in("echo 'error: unknown argument: --jinja' >&2; exit 1");
    let log = dir.path().join("server.log");
    let error = RunningServer::start(&script, Path::new("/m.gguf"), &log)
        .unwrap_err()
        .to_string();
    assert!(error.contains("exited during startup"), "{error}");
    assert!(error.contains("unknown argument: --jinja"), "{error}");
}

#[test]
fn the_stand_in_ran_in_its_own_directory() {
    let (dir, script) = stand_in("pwd; exit 2");
    let log = dir.path().join("server.log");
    let _ = RunningServer::start(&script, Path::new("/m.gguf"), &log).unwrap_err();
    let cwd = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        Path::new(cwd.trim()).canonicalize().unwrap(),
        dir.path().canonicalize().unwrap()
    );
}
