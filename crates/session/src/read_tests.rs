use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use pretty_assertions::assert_eq;
use subagent_protocol::Limits;
use subagent_protocol::session::{
    AgentEvent, LifecycleEvent, LifecycleStatus, RunMode, SandboxStatus, SessionEntry,
    SessionHeader, SessionLine, UsageLine,
};

use super::*;
use crate::gc::{GcVictim, plan_gc, remove_sessions};

fn at(timestamp: &str, entry: SessionEntry) -> String {
    serde_json::to_string(&SessionLine {
        entry,
        timestamp: timestamp.into(),
    })
    .unwrap()
}

fn header(run_id: &str, agent: &str) -> SessionEntry {
    SessionEntry::Session(SessionHeader {
        version: 1,
        run_id: run_id.into(),
        agent: agent.into(),
        task: "count the files".into(),
        model: "m".into(),
        provider: "openai-chat".into(),
        cwd: "/w".into(),
        depth: 1,
        limits: Limits::default(),
        sandbox: SandboxStatus::default(),
        tool_sandbox: None,
        parent_session: None,
        tools: None,
        output_schema: None,
        output_mode: None,
        max_turns: None,
        max_cost: None,
        python: None,
        resumed_from: None,
        batch_task: None,
    })
}

fn event(kind: LifecycleEvent, status: Option<LifecycleStatus>) -> SessionEntry {
    SessionEntry::AgentEvent(AgentEvent {
        event_type: kind,
        job_id: "r1".into(),
        requested_by: "me".into(),
        agent_name: "general".into(),
        mode: RunMode::Single,
        pid: Some(7),
        started_at: "2026-11-22T12:00:00.000Z".into(),
        completed_at: None,
        duration_ms: status.map(|_| 1_500),
        model: "m".into(),
        usage: None,
        status,
        summary: None,
        session_file: None,
        error: None,
        stop_reason: None,
    })
}

fn usage(input: u64) -> SessionEntry {
    SessionEntry::Usage(UsageLine {
        turn: 1,
        usage: Usage {
            input,
            output: 2,
            turns: 1,
            ..Usage::default()
        },
    })
}

/// A finished run's file text, ending with `end` when given.
fn run_text(run_id: &str, start: &str, end: Option<LifecycleEvent>) -> String {
    let mut lines = vec![
        at(start, header(run_id, "general")),
        at(start, event(LifecycleEvent::Start, None)),
        at(start, usage(10)),
        at(start, usage(5)),
    ];
    if let Some(kind) = end {
        let status = match kind {
            LifecycleEvent::Error => LifecycleStatus::Failed,
            LifecycleEvent::Aborted => LifecycleStatus::Aborted,
            _ => LifecycleStatus::Completed,
        };
        lines.push(at(start, event(kind, Some(status))));
    }
    lines.join("\n") + "\n"
}

#[test]
fn a_torn_last_line_is_reported_and_the_rest_is_kept() {
    let text = run_text("r1", "2026-11-22T12:00:00.000Z", None) + r#"{"type":"log","time"#;
    let items = parse_session(&text);
    assert_eq!(items.len(), 5);
    assert_eq!(
        items[4],
        ReadItem::Torn {
            line_no: 5,
            bytes: 19
        }
    );
    let s = summarize(Path::new("f"), &items).unwrap();
    assert_eq!(s.status, SessionStatus::Interrupted);
    assert!(s.torn);
}

#[test]
fn unknown_line_types_are_skipped_but_broken_known_ones_are_invalid() {
    let text = format!(
        "{}\n{}\n{}\nnot json\n",
        at("2026-11-22T12:00:00.000Z", header("r1", "general")),
        r#"{"type":"hologram","timestamp":"2026-11-22T12:00:00.000Z"}"#,
        r#"{"type":"usage","timestamp":"2026-11-22T12:00:00.000Z"}"#,
    );
    let items = parse_session(&text);
    assert!(matches!(items[0], ReadItem::Line(_)));
    assert_eq!(
        items[1],
        ReadItem::Unknown {
            line_no: 2,
            line_type: Some("hologram".into())
        }
    );
    assert!(matches!(items[2], ReadItem::Invalid { line_no: 3, .. }));
    assert!(matches!(items[3], ReadItem::Invalid { line_no: 4, .. }));
}

#[test]
fn every_entry_type_is_a_known_line_type() {
    let entries = [
        header("r", "a"),
        event(LifecycleEvent::Start, None),
        usage(1),
    ];
    for e in entries {
        let v: serde_json::Value = serde_json::from_str(&at("t", e)).unwrap();
        assert!(KNOWN_LINE_TYPES.contains(&v["type"].as_str().unwrap()));
    }
}

#[test]
fn status_comes_from_the_ending_lifecycle_line() {
    for (end, want) in [
        (Some(LifecycleEvent::Complete), SessionStatus::Completed),
        (Some(LifecycleEvent::Error), SessionStatus::Failed),
        (Some(LifecycleEvent::Aborted), SessionStatus::Aborted),
        (None, SessionStatus::Interrupted),
    ] {
        let items = parse_session(&run_text("r1", "2026-11-22T12:00:00.000Z", end));
        let s = summarize(Path::new("f"), &items).unwrap();
        assert_eq!(s.status, want, "{end:?}");
        // No totals on the end line: the usage lines are summed.
        assert_eq!(s.usage.input, 15);
    }
}

#[test]
fn timestamps_parse_as_the_writer_writes_them() {
    let t = UNIX_EPOCH + Duration::from_millis(1_795_348_800_123);
    assert_eq!(
        parse_timestamp(&subagent_protocol::time::rfc3339_ms(t)),
        Some(t)
    );
    assert_eq!(parse_timestamp("1970-01-01T00:00:00Z"), Some(UNIX_EPOCH));
    assert_eq!(
        parse_timestamp("2000-03-01T00:00:00Z"),
        Some(UNIX_EPOCH + Duration::from_secs(951_868_800))
    );
    for bad in [
        "",
        "2026-11-22",
        "2026-13-22T12:00:00Z",
        "2026-11-22T12:00:00+01:00",
    ] {
        assert_eq!(parse_timestamp(bad), None, "{bad}");
    }
}

fn write_run(dir: &Path, day: &str, run_id: &str, start: &str) -> PathBuf {
    let path = dir.join(day).join(format!("{run_id}-general.jsonl"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        run_text(run_id, start, Some(LifecycleEvent::Complete)),
    )
    .unwrap();
    path
}

#[test]
fn runs_are_found_by_unique_prefix_and_ambiguity_lists_the_candidates() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_run(
        dir.path(),
        "2026/11/22",
        "abc111",
        "2026-11-22T12:00:00.000Z",
    );
    let b = write_run(
        dir.path(),
        "2026/11/23",
        "abc222",
        "2026-11-23T12:00:00.000Z",
    );
    assert_eq!(find_session(dir.path(), "abc1").unwrap(), a);
    assert_eq!(find_session(dir.path(), b.to_str().unwrap()).unwrap(), b);
    match find_session(dir.path(), "abc") {
        Err(ReadError::Ambiguous { candidates, .. }) => assert_eq!(candidates, vec![a, b]),
        other => panic!("{other:?}"),
    }
    let err = find_session(dir.path(), "zzz").unwrap_err().to_string();
    assert!(err.contains(&dir.path().display().to_string()), "{err}");
}

#[test]
fn ls_is_newest_first_and_filters_narrow_it() {
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path(), "2026/11/20", "old", "2026-11-20T12:00:00.000Z");
    write_run(dir.path(), "2026/11/22", "new", "2026-11-22T12:00:00.000Z");
    let all = list_sessions(dir.path()).unwrap().0;
    let ids: Vec<&str> = all.iter().map(|s| s.run_id.as_str()).collect();
    assert_eq!(ids, ["new", "old"]);
    let since = SessionFilter {
        since: parse_timestamp("2026-11-21T00:00:00Z"),
        ..SessionFilter::default()
    };
    assert_eq!(since.apply(all.clone()).len(), 1);
    let limit = SessionFilter {
        limit: Some(1),
        ..SessionFilter::default()
    };
    assert_eq!(limit.apply(all.clone())[0].run_id, "new");
    let failed = SessionFilter {
        status: Some(SessionStatus::Failed),
        ..SessionFilter::default()
    };
    assert!(failed.apply(all).is_empty());
}

#[test]
fn gc_chooses_by_header_time_and_removes_emptied_dirs() {
    let dir = tempfile::tempdir().unwrap();
    let old = write_run(dir.path(), "2025/01/01", "old", "2025-01-01T12:00:00.000Z");
    let output = old.with_extension("output.txt");
    std::fs::write(&output, "full output").unwrap();
    let new = write_run(dir.path(), "2026/11/22", "new", "2026-11-22T12:00:00.000Z");
    // Kept changes of both runs: the old run's go with it.
    let old_layer = dir.path().join("layers/old");
    let new_layer = dir.path().join("layers/new");
    for layer in [&old_layer, &new_layer] {
        std::fs::create_dir_all(layer.join("blobs")).unwrap();
        std::fs::write(layer.join("manifest.json"), "{}").unwrap();
    }
    let now = parse_timestamp("2026-11-23T00:00:00Z").unwrap();
    let victims = plan_gc(dir.path(), Duration::from_secs(30 * 86_400), now).unwrap();
    assert_eq!(
        victims,
        vec![GcVictim {
            session_file: old.clone(),
            output_file: Some(output.clone()),
            started_at: "2025-01-01T12:00:00.000Z".into(),
            kept_layer: Some(old_layer.clone()),
        }]
    );
    let removed = remove_sessions(dir.path(), &victims).unwrap();
    assert_eq!(
        removed,
        vec![
            old,
            output,
            old_layer.clone(),
            dir.path().join("2025/01/01"),
            dir.path().join("2025/01"),
            dir.path().join("2025"),
        ]
    );
    assert!(new.exists() && new_layer.exists() && !old_layer.exists());
}

#[test]
fn listing_skips_a_fifo_a_device_link_and_an_oversized_file_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let day = dir.path().join("2026/11/22");
    std::fs::create_dir_all(&day).unwrap();
    nix::unistd::mkfifo(&day.join("fifo.jsonl"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    std::os::unix::fs::symlink("/dev/zero", day.join("zero.jsonl")).unwrap();
    std::fs::File::create(day.join("big.jsonl"))
        .unwrap()
        .set_len(crate::SESSION_FILE_CAP + 1)
        .unwrap();
    // Neither the FIFO (no writer) nor /dev/zero holds up the listing.
    let (found, skipped) = list_sessions(dir.path()).unwrap();
    assert!(found.is_empty());
    let mut why: Vec<String> = skipped.iter().map(ToString::to_string).collect();
    why.sort();
    assert_eq!(why.len(), 3, "{why:#?}");
    assert!(
        why[0].contains("big.jsonl is 33554433 bytes, over the 32M"),
        "{why:#?}"
    );
    assert!(why[1].contains("fifo.jsonl is a FIFO"), "{why:#?}");
    assert!(why[2].contains("zero.jsonl is a symbolic link"), "{why:#?}");
}
