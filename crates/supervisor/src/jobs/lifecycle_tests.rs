use std::time::{Duration, SystemTime};

use pretty_assertions::assert_eq;
use subagent_protocol::session::{AgentEvent, LifecycleEvent, LifecycleStatus, RunMode};

use super::*;

fn start(job: &str, session_file: Option<&str>) -> AgentEvent {
    let SessionEntry::AgentEvent(mut event) = job_start_line(
        job,
        "tester",
        "general",
        RunMode::Single,
        "smollm2",
        "2026-01-02T03:04:05.000Z",
    )
    .entry
    else {
        panic!("a start line is an agent_event");
    };
    event.session_file = session_file.map(str::to_owned);
    event
}

/// `text` chained as subagent chains it (this process's key: the session
/// crate's fixed test key is its own tests' only).
fn sealed(text: &str) -> String {
    crate::session::chain::reseal(crate::session::key::session_key().unwrap(), text).unwrap()
}

fn line(event: AgentEvent) -> String {
    let mut text =
        serde_json::to_string(&SessionLine::now(SessionEntry::AgentEvent(event))).unwrap();
    text.push('\n');
    text
}

#[test]
fn a_start_without_an_ending_is_open_and_one_with_an_ending_is_not() {
    let ended = AgentEvent {
        event_type: LifecycleEvent::Complete,
        status: Some(LifecycleStatus::Completed),
        ..start("aaaa0001", None)
    };
    let text = [
        line(start("aaaa0001", None)),
        line(start("bbbb0002", None)),
        line(ended),
    ]
    .concat();
    let open: Vec<String> = unterminated_starts(&parse_session(&text))
        .into_iter()
        .map(|s| s.job_id)
        .collect();
    assert_eq!(open, vec!["bbbb0002".to_owned()]);
}

#[test]
fn an_interrupted_ending_is_an_aborted_line_that_says_interrupted() {
    let start = start("cccc0003", Some("child.jsonl"));
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_323_045 + 10);
    let SessionEntry::AgentEvent(ending) = interrupted_line(&start, now).entry else {
        panic!("an ending is an agent_event");
    };
    assert_eq!(ending.event_type, LifecycleEvent::Aborted);
    assert_eq!(ending.status, Some(LifecycleStatus::Aborted));
    assert_eq!(ending.job_id, "cccc0003");
    assert_eq!(ending.session_file.as_deref(), Some("child.jsonl"));
    assert_eq!(ending.duration_ms, Some(10_000));
    assert!(is_interrupted_line(&ending));
    // Like every aborted ending, it says why.
    let error = ending.error.clone().unwrap();
    assert_eq!(error.code, "SUBAGENT_FAILED");
    assert!(error.message.starts_with(INTERRUPTED_SUMMARY_PREFIX));
    let cancelled = AgentEvent {
        summary: Some("cancelled by the caller".into()),
        ..ending
    };
    assert!(!is_interrupted_line(&cancelled));
}

#[test]
fn marking_appends_endings_to_the_parent_and_the_child_once() {
    let dir = tempfile::tempdir().unwrap();
    let parent = dir.path().join("serve.jsonl");
    let child = dir.path().join("child.jsonl");
    let child_name = child.display().to_string();
    std::fs::write(&child, sealed(&line(start("dddd0004", Some(&child_name))))).unwrap();
    // The parent's last line was torn by the kill.
    std::fs::write(
        &parent,
        format!(
            "{}{{\"type\":\"agent_ev",
            sealed(&line(start("dddd0004", Some(&child_name))))
        ),
    )
    .unwrap();

    let marked = mark_interrupted(&parent, dir.path()).unwrap();
    assert_eq!(marked.len(), 1);
    assert_eq!(marked[0].start.job_id, "dddd0004");
    for file in [&parent, &child] {
        // What recovery appends is chained too, the torn line covered.
        crate::session::verified::read_verified(file).unwrap();
        let items = parse_session(&std::fs::read_to_string(file).unwrap());
        assert!(unterminated_starts(&items).is_empty(), "{}", file.display());
        let last = items.iter().rev().find_map(|i| match i {
            ReadItem::Line(l) => match &l.entry {
                SessionEntry::AgentEvent(e) => Some(e.clone()),
                _ => None,
            },
            _ => None,
        });
        assert!(
            last.is_some_and(|e| is_interrupted_line(&e)),
            "{}",
            file.display()
        );
    }
    assert!(
        mark_interrupted(&parent, dir.path()).unwrap().is_empty(),
        "marked twice"
    );
}

#[test]
fn a_child_file_whose_start_line_never_reached_the_disk_is_ended_too() {
    let dir = tempfile::tempdir().unwrap();
    let parent = dir.path().join("serve.jsonl");
    let child = dir.path().join("child.jsonl");
    let child_name = child.display().to_string();
    // Only a line that is not lifecycle: the writer thread died before the start.
    std::fs::write(
        &child,
        sealed("{\"type\":\"future_line\",\"timestamp\":\"x\"}\n"),
    )
    .unwrap();
    std::fs::write(&parent, sealed(&line(start("ffff0006", Some(&child_name))))).unwrap();
    mark_interrupted(&parent, dir.path()).unwrap();
    let items = parse_session(&std::fs::read_to_string(&child).unwrap());
    assert!(has_ending(&items, "ffff0006"));
    assert!(!has_ending(&items, "00000000"));
}

#[test]
fn a_failed_jobs_ending_carries_the_results_code_message_and_limit() {
    use subagent_protocol::ErrorCode;
    use subagent_protocol::result::{LimitName, LimitReached, SingleResult, SubagentResult};
    let mut result = SubagentResult::refusal(ErrorCode::SubagentTimeout, "timed out after 1 s");
    let mut child = SingleResult::new("general", "t", 1);
    child.limit = Some(LimitReached::count(LimitName::WallTimeoutMs, 1_000));
    child.stop_reason = Some("timeout".into());
    result.details.results.push(child);
    let SessionEntry::AgentEvent(ending) = job_end_line(&start("eeee0005", None), &result, 5).entry
    else {
        panic!("an ending is an agent_event");
    };
    assert_eq!(ending.status, Some(LifecycleStatus::Failed));
    let error = ending.error.unwrap();
    assert_eq!(
        (error.code.as_str(), error.message.as_str()),
        ("SUBAGENT_TIMEOUT", "timed out after 1 s")
    );
    assert_eq!(
        error.limit,
        Some(LimitReached::count(LimitName::WallTimeoutMs, 1_000))
    );
    assert_eq!(ending.stop_reason.as_deref(), Some("timeout"));
}

#[test]
fn recovery_appends_to_no_file_subagent_did_not_write_or_that_lies_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    // An agent file, a chained session file outside the sessions dir, and
    // an unchained one inside it: a start line names each.
    let agent = dir.path().join("agent.md");
    std::fs::write(&agent, "---\nname: a\n---\nBe helpful.\n").unwrap();
    let outside = dir.path().join("elsewhere.jsonl");
    std::fs::write(&outside, sealed(&line(start("aaaa0001", None)))).unwrap();
    let unchained = sessions.join("planted.jsonl");
    std::fs::write(&unchained, line(start("bbbb0002", None))).unwrap();
    let before: Vec<String> = [&agent, &outside, &unchained]
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let parent = sessions.join("serve.jsonl");
    let starts: String = [
        ("aaaa0001", &agent),
        ("bbbb0002", &outside),
        ("cccc0003", &unchained),
    ]
    .iter()
    .map(|(job, f)| line(start(job, Some(&f.display().to_string()))))
    .collect();
    std::fs::write(&parent, sealed(&starts)).unwrap();
    assert_eq!(mark_interrupted(&parent, &sessions).unwrap().len(), 3);
    let after: Vec<String> = [&agent, &outside, &unchained]
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    assert_eq!(after, before);

    // A server file subagent did not write gets nothing either.
    let forged = sessions.join("forged.jsonl");
    let forged_text = line(start("dddd0004", None));
    std::fs::write(&forged, &forged_text).unwrap();
    assert!(mark_interrupted(&forged, &sessions).unwrap().is_empty());
    assert_eq!(std::fs::read_to_string(&forged).unwrap(), forged_text);
}
