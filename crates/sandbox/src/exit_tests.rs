use super::*;

const NOTHING: CgroupVerdict = CgroupVerdict {
    oom_killed: false,
    memory_limit_hit: false,
    pids_limit_hit: false,
};

#[test]
fn recorded_kill_reason_wins_over_everything() {
    let all_bad = CgroupVerdict {
        oom_killed: true,
        memory_limit_hit: true,
        pids_limit_hit: true,
    };
    let verdict = decide(
        Some(&KillReason::OutputLimit(Stream::Stderr)),
        RawExit::Signaled(libc::SIGKILL),
        all_bad,
        &[42],
    );
    assert_eq!(
        verdict,
        Termination::OutputLimit {
            stream: Stream::Stderr
        }
    );
    let other = decide(
        Some(&KillReason::ProtocolViolation),
        RawExit::Exited(0),
        NOTHING,
        &[],
    );
    assert_eq!(
        other,
        Termination::Killed {
            reason: "protocol violation".into()
        }
    );
}

#[test]
fn oom_kill_beats_pids_and_leaks() {
    let verdict = decide(
        None,
        RawExit::Exited(0),
        CgroupVerdict {
            oom_killed: true,
            memory_limit_hit: true,
            pids_limit_hit: true,
        },
        &[7],
    );
    assert_eq!(verdict, Termination::MemoryLimit);
}

#[test]
fn memory_limit_hit_counts_only_with_sigkill() {
    let hit = CgroupVerdict {
        memory_limit_hit: true,
        ..NOTHING
    };
    assert_eq!(
        decide(None, RawExit::Signaled(libc::SIGKILL), hit, &[]),
        Termination::MemoryLimit
    );
    assert_eq!(
        decide(None, RawExit::Exited(3), hit, &[]),
        Termination::Exited { code: 3 }
    );
}

#[test]
fn pids_cap_counts_only_with_abnormal_exit() {
    let hit = CgroupVerdict {
        pids_limit_hit: true,
        ..NOTHING
    };
    assert_eq!(
        decide(None, RawExit::Exited(2), hit, &[]),
        Termination::PidsLimit
    );
    assert_eq!(
        decide(None, RawExit::Exited(0), hit, &[]),
        Termination::Exited { code: 0 }
    );
}

#[test]
fn leaks_beat_the_raw_status() {
    assert_eq!(
        decide(None, RawExit::Exited(0), NOTHING, &[5, 6]),
        Termination::Leaked { pids: vec![5, 6] }
    );
    assert_eq!(
        decide(None, RawExit::Signaled(11), NOTHING, &[]),
        Termination::Signaled { signal: 11 }
    );
}

#[test]
fn only_clean_exit_is_success() {
    assert!(Termination::Exited { code: 0 }.is_success());
    assert!(!Termination::Exited { code: 1 }.is_success());
    assert!(!Termination::Leaked { pids: vec![1] }.is_success());
    assert_eq!(Termination::IdleTimeout.reason(), "idle_timeout");
    assert_eq!(
        Termination::OutputLimit {
            stream: Stream::Stdout
        }
        .reason(),
        "output_limit"
    );
}
