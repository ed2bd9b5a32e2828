use subagent_protocol::{Usage, WorkerEvent};

use super::*;
use crate::live::reader::list_live;

fn live_state(dir: &Path) -> Vec<(String, LiveState, Option<String>)> {
    list_live(dir, Duration::from_secs(60))
        .unwrap()
        .runs
        .into_iter()
        .map(|e| (e.run_id, e.state, e.tool))
        .collect()
}

#[test]
fn a_record_follows_the_run_and_goes_when_the_run_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let id = crate::session::run_ids::new_run_id();
    let run = LiveRun::begin(dir.path(), &id, "general", "m", None);
    assert_eq!(run.run_id(), Some(id.clone()));
    assert_eq!(
        live_state(dir.path()),
        [(id.clone(), LiveState::Starting, None)]
    );
    run.observe(&WorkerEvent::TurnStart { turn: 1 });
    run.observe(&WorkerEvent::ToolCall {
        turn: 1,
        call_id: "c1".into(),
        name: "bash_read".into(),
        arguments_json: "{}".into(),
    });
    run.observe(&WorkerEvent::Usage {
        turn: 1,
        usage: Usage {
            input: 7,
            output: 3,
            ..Usage::default()
        },
    });
    // Writes go through the writer thread: wait for it to catch up.
    let deadline = Instant::now() + Duration::from_secs(10);
    while live_state(dir.path())[0].1 != LiveState::RunningTool {
        assert!(
            Instant::now() < deadline,
            "the record never said running_tool"
        );
        std::thread::yield_now();
    }
    assert_eq!(
        live_state(dir.path())[0].2.as_deref(),
        Some("bash_read"),
        "the tool is named"
    );
    drop(run);
    assert!(live_state(dir.path()).is_empty());
    // What is left is a spare (a dot name), kept for the next run.
    let names = |dir: &Path| -> Vec<String> {
        std::fs::read_dir(dir.join(LIVE_DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    let left = names(dir.path());
    assert!(left.iter().all(|n| n.starts_with(".spare.")), "{left:?}");
    // The next run takes it: no new file is made.
    let next = crate::session::run_ids::new_run_id();
    let again = LiveRun::begin(dir.path(), &next, "general", "m", None);
    let now = names(dir.path());
    assert_eq!(now.len(), left.len().max(1), "{now:?}");
    assert!(now.contains(&next), "{now:?}");
    drop(again);
}

#[test]
fn states_follow_the_worker_events() {
    let mut now = Now {
        record: crate::live::record::tests_support::record(),
        tools: Vec::new(),
        asked: Instant::now(),
    };
    assert!(now.take(&WorkerEvent::TurnStart { turn: 2 }));
    assert_eq!(now.record.state, LiveState::WaitingForModel);
    assert_eq!(now.record.turns, 2);
    assert!(now.take(&WorkerEvent::TextDelta { text: "a".into() }));
    assert!(!now.take(&WorkerEvent::TextDelta { text: "b".into() }));
    assert_eq!(now.record.state, LiveState::Streaming);
    let call = |id: &str, name: &str| WorkerEvent::ToolCall {
        turn: 2,
        call_id: id.into(),
        name: name.into(),
        arguments_json: "{}".into(),
    };
    let result = |id: &str| WorkerEvent::ToolResult {
        call_id: id.into(),
        name: String::new(),
        output: String::new(),
        is_error: false,
    };
    assert!(now.take(&call("a", "bash_read")));
    assert!(now.take(&call("b", "subagent")));
    assert_eq!(now.record.tool.as_deref(), Some("subagent"));
    assert!(now.take(&result("b")));
    assert_eq!(now.record.tool.as_deref(), Some("bash_read"));
    assert!(now.take(&result("a")));
    assert_eq!(
        (now.record.state, now.record.tool.as_deref()),
        (LiveState::Working, None)
    );
}

#[test]
fn a_live_dir_that_is_a_link_gets_no_record() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(LIVE_DIR)).unwrap();
    let run = LiveRun::begin(
        dir.path(),
        "0190aaaabbbbccccddddeeeeffff0000",
        "a",
        "m",
        None,
    );
    assert_eq!(run.run_id(), None);
    assert!(
        std::fs::read_dir(elsewhere.path())
            .unwrap()
            .next()
            .is_none()
    );
}
