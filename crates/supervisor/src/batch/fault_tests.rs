use pretty_assertions::assert_eq;
use subagent_protocol::result::{
    ContentItem, Details, ErrorInfo, Mode, RunMode, SingleResult, TerminationInfo,
};

use super::*;

fn ended(code: Option<ErrorCode>, stop_reason: &str) -> SubagentResult {
    let mut single = SingleResult::new("general", "t", 0);
    single.stop_reason = Some(stop_reason.to_owned());
    SubagentResult {
        content: vec![ContentItem::Text {
            text: "answer".into(),
        }],
        details: Details {
            mode: Mode::Run(RunMode::Single),
            run_id: Some("abcd1234".into()),
            results: vec![single],
            error: code.map(|code| ErrorInfo {
                code,
                message: "it broke".into(),
            }),
        },
    }
}

#[test]
fn a_lost_session_file_and_an_unstarted_worker_are_machine_faults() {
    assert_eq!(
        machine_fault(&ended(Some(ErrorCode::SubagentSessionLost), "stop")).as_deref(),
        Some("it broke")
    );
    assert_eq!(
        machine_fault(&ended(Some(ErrorCode::SubagentFailed), "not_started")).as_deref(),
        Some("the worker could not be started: it broke")
    );
}

/// A failed run whose worker ended with `reason` and `signal`.
fn signalled(reason: &str, signal: Signal) -> SubagentResult {
    let mut result = ended(Some(ErrorCode::SubagentFailed), "signaled");
    result.details.results[0].termination = Some(TerminationInfo {
        reason: reason.into(),
        exit_status: None,
        signal: Some(signal as i32),
        leaked_pids: Vec::new(),
        wall_ms: 1,
        cpu_ms: 1,
        peak_rss_bytes: 1,
    });
    result
}

#[test]
fn a_worker_stopped_from_outside_by_a_stop_signal_is_a_machine_fault() {
    for sig in [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP] {
        let fault = machine_fault(&signalled("signaled", sig));
        assert!(
            fault
                .as_deref()
                .is_some_and(|f| f.contains("stopped from outside")),
            "{sig:?}: {fault:?}"
        );
    }
    // A crash is the task's; so is a kill the supervisor made itself.
    assert_eq!(machine_fault(&signalled("signaled", Signal::SIGSEGV)), None);
    assert_eq!(machine_fault(&signalled("timeout", Signal::SIGTERM)), None);
    assert_eq!(machine_fault(&signalled("killed", Signal::SIGTERM)), None);
}

#[test]
fn task_failures_and_successes_are_not_machine_faults() {
    for (code, stop) in [
        (None, "stop"),
        (Some(ErrorCode::SubagentFailed), "error"),
        (Some(ErrorCode::SubagentTimeout), "timeout"),
        (Some(ErrorCode::SubagentBudgetExceeded), "max_turns"),
        // Refusing to run unsandboxed follows from the task's caps.
        (Some(ErrorCode::SubagentSandboxUnavailable), "not_started"),
    ] {
        assert_eq!(machine_fault(&ended(code, stop)), None, "{code:?} {stop}");
    }
}

#[test]
fn a_writable_sessions_dir_passes_the_probe_and_keeps_no_probe_file() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("sessions");
    probe_sessions_dir(&sessions).unwrap();
    assert_eq!(std::fs::read_dir(&sessions).unwrap().count(), 0);
}

#[test]
fn a_sessions_dir_that_cannot_be_made_names_the_dir_and_the_step() {
    // /proc refuses new directories even to root.
    let err = probe_sessions_dir(Path::new("/proc/subagent-sessions")).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("/proc/subagent-sessions"), "{text}");
    assert!(text.contains("create the dir"), "{text}");
    assert!(text.contains("--sessions-dir"), "{text}");
}

#[test]
fn a_missing_or_non_executable_worker_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-worker");
    let text = check_worker(&missing).unwrap_err().to_string();
    assert!(text.contains("no such file"), "{text}");
    let plain = tmp.path().join("plain");
    std::fs::write(&plain, "not a program").unwrap();
    // Root may execute only files with an execute bit.
    let text = check_worker(&plain).unwrap_err().to_string();
    assert!(text.contains("not executable"), "{text}");
    assert!(check_worker(Path::new("/bin/true")).is_ok());
    assert!(check_worker(Path::new("true")).is_ok());
    assert!(check_worker(Path::new("no-such-program-anywhere")).is_err());
}
