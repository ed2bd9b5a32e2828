use pretty_assertions::assert_eq;

use super::*;

#[test]
fn an_ok_probe_is_one_line_with_its_detail() {
    assert_eq!(Probe::ok("landlock", "ABI 6").line(), "ok  landlock: ABI 6");
}

#[test]
fn a_missing_probe_names_its_fix_on_the_same_line() {
    let probe = Probe::missing("seccomp", "not built\ninto this kernel", "rebuild it");
    assert_eq!(
        probe.line(),
        "MISSING  seccomp: not built into this kernel -- rebuild it"
    );
}

#[test]
fn a_report_is_ok_only_when_every_probe_is() {
    let fine = Probe::ok("a", "x");
    let broken = Probe::missing("b", "y", "z");
    assert!(Report::new(vec![fine.clone()]).ok);
    assert!(!Report::new(vec![fine, broken]).ok);
}

#[test]
fn the_json_of_a_report_has_fix_only_on_missing_probes() {
    let report = Report::new(vec![Probe::ok("a", "x"), Probe::missing("b", "y", "z")]);
    assert_eq!(
        serde_json::to_value(&report).unwrap(),
        serde_json::json!({
            "ok": false,
            "probes": [
                {"name": "a", "ok": true, "detail": "x"},
                {"name": "b", "ok": false, "detail": "y", "fix": "z"},
            ]
        })
    );
}

#[test]
fn a_missing_sandbox_layer_keeps_the_sandboxs_reason_and_adds_a_fix() {
    let probe = namespaces_probe(&Err("unshare was refused".into()));
    assert_eq!(probe.detail, "unshare was refused");
    assert!(probe.fix.unwrap().contains("sysctl"));
    assert_eq!(landlock_probe(&Ok(4)), Probe::ok("landlock", "ABI 4"));
    assert!(!seccomp_probe(&Err("no".into())).ok);
    let view = filesystem_view_probe(&Err("pivot_root into the filesystem view failed".into()));
    assert_eq!(view.detail, "pivot_root into the filesystem view failed");
    assert!(view.fix.unwrap().contains("namespaces probe first"));
}

#[test]
fn a_cgroup_without_controllers_is_missing_with_delegation_as_the_fix() {
    let probe = cgroup_probe(&Err("no pids controller".into()));
    assert!(!probe.ok);
    let fix = probe.fix.unwrap();
    assert!(
        fix.contains("systemd-run --user --scope -p Delegate=yes"),
        "{fix}"
    );
    assert!(fix.contains("RLIMIT_DATA"), "{fix}");
}

#[test]
fn a_delegated_cgroup_is_ok_and_says_where_the_supervisor_moves() {
    let scope = std::path::PathBuf::from("/sys/fs/cgroup/app.slice/run-r1.scope");
    let probe = cgroup_probe(&Ok(subagent_sandbox::CgroupKind::v2(
        scope.clone(),
        Some(scope.join("subagent-7-self")),
    )));
    assert_eq!(
        probe,
        Probe::ok(
            "cgroup",
            "v2, delegated to us at /sys/fs/cgroup/app.slice/run-r1.scope: the supervisor \
             moves itself into /sys/fs/cgroup/app.slice/run-r1.scope/subagent-7-self and \
             makes its children's cgroups beside it, with memory and pids caps"
        )
    );
}

#[test]
fn python_reports_its_version_and_real_executable() {
    let outcome = PythonOutcome::Exited {
        success: true,
        stdout: "3.12.3 /usr/bin/python3.12\n".into(),
        stderr: String::new(),
    };
    assert_eq!(
        python_probe_from(&outcome),
        Probe::ok("python3", "3.12.3 at /usr/bin/python3.12")
    );
}

#[test]
fn python_that_is_absent_failing_hanging_or_python2_is_missing() {
    for outcome in [
        PythonOutcome::NotStarted("No such file or directory".into()),
        PythonOutcome::TimedOut,
        PythonOutcome::Exited {
            success: false,
            stdout: String::new(),
            stderr: "boom".into(),
        },
        PythonOutcome::Exited {
            success: true,
            stdout: "2.7.18 /usr/bin/python2".into(),
            stderr: String::new(),
        },
    ] {
        let probe = python_probe_from(&outcome);
        assert!(!probe.ok, "{outcome:?}");
        assert!(probe.fix.unwrap().contains("install Python 3"));
    }
}

#[test]
fn base_urls_split_into_host_port_and_path() {
    assert_eq!(
        parse_http_url("http://127.0.0.1:8080/v1/").unwrap(),
        HttpTarget {
            tls: false,
            host: "127.0.0.1".into(),
            port: 8080,
            path: "/v1".into(),
        }
    );
    assert_eq!(
        parse_http_url("https://api.openai.com/v1").unwrap(),
        HttpTarget {
            tls: true,
            host: "api.openai.com".into(),
            port: 443,
            path: "/v1".into(),
        }
    );
    assert_eq!(
        parse_http_url("http://[::1]:9/").unwrap(),
        HttpTarget {
            tls: false,
            host: "::1".into(),
            port: 9,
            path: String::new(),
        }
    );
}

#[test]
fn urls_that_are_not_http_or_lack_a_host_or_port_are_refused() {
    for url in [
        "ftp://x/",
        "127.0.0.1:8080",
        "http:///v1",
        "http://h:port/",
        "http://[::1/",
    ] {
        assert!(parse_http_url(url).is_err(), "{url}");
    }
}

#[test]
fn model_lists_in_the_shared_shape_are_read() {
    assert_eq!(
        model_ids(r#"{"object":"list","data":[{"id":"m"},{"id":"n","owned_by":"x"}]}"#),
        Some(vec!["m".to_owned(), "n".to_owned()])
    );
    assert_eq!(model_ids(r#"{"error":"unauthorized"}"#), None);
    assert_eq!(model_ids("not json"), None);
}

#[test]
fn a_sessions_dir_under_a_regular_file_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let probe = sessions_dir_probe(Some(&file.join("sessions")));
    assert!(!probe.ok);
    assert!(probe.fix.is_some());
    assert!(sessions_dir_probe(Some(&dir.path().join("new/sessions"))).ok);
    // The probe file is gone again.
    assert_eq!(
        std::fs::read_dir(dir.path().join("new/sessions"))
            .unwrap()
            .count(),
        0
    );
}

#[test]
fn a_worker_that_is_absent_or_not_a_file_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    assert!(!worker_probe(Some(&dir.path().join("nope"))).ok);
    assert!(!worker_probe(Some(dir.path())).ok);
    assert!(!worker_probe(None).ok);
}

#[test]
fn a_warning_probe_is_ok_and_says_how_to_settle_it_on_one_line() {
    let probe = Probe::warning("model", "m is not\nlisted", "ask it");
    assert!(probe.ok);
    assert_eq!(probe.line(), "warning  model: m is not listed -- ask it");
    let json = serde_json::to_value(&probe).unwrap();
    assert_eq!(json["warning"], true);
    assert!(
        serde_json::to_value(Probe::ok("x", "y"))
            .unwrap()
            .get("warning")
            .is_none()
    );
}

#[test]
fn open_files_probe_says_how_many_live_subagents_fit_and_what_it_was_raised_from() {
    let raised = subagent_sandbox::OpenFilesLimit {
        soft: 20_000,
        hard: 20_000,
        raised_from: Some(1_024),
    };
    let probe = open_files_probe(&Ok(raised));
    assert!(probe.ok, "{probe:?}");
    assert_eq!(
        probe.detail,
        "20000 (hard limit 20000, raised from 1024): room for 6560 live subagents"
    );
    // 64 + 15 * (3 + a session file) = 124: one short of the default 16.
    let small = subagent_sandbox::OpenFilesLimit {
        soft: 127,
        hard: 127,
        raised_from: None,
    };
    let probe = open_files_probe(&Ok(small));
    assert!(!probe.ok, "{probe:?}");
    assert!(
        probe
            .fix
            .as_deref()
            .is_some_and(|f| f.contains("ulimit -Hn"))
    );
}
