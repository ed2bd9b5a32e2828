use subagent_protocol::session::{LifecycleEvent, SessionEntry};

use super::*;
use crate::jobs::lifecycle::is_interrupted_line;
use crate::run::WorkerCommand;
use crate::session::read::parse_session;

fn config(dir: &Path) -> SupervisorConfig {
    SupervisorConfig::new(
        WorkerCommand {
            program: PathBuf::from("/nonexistent/worker"),
            args: Vec::new(),
        },
        dir.join("sessions"),
    )
}

#[test]
fn a_parent_file_held_by_a_live_registry_is_busy() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("serve").join("serve-1.jsonl");
    let _jobs = Jobs::new(config(dir.path()), Some(file.clone())).unwrap();
    let second = Jobs::new(config(dir.path()), Some(file.clone()));
    assert!(matches!(second, Err(JobsError::Busy(p)) if p == file));
}

#[test]
fn recovery_marks_a_dead_servers_file_and_lists_its_runs_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let serve_dir = dir.path().join("serve");
    std::fs::create_dir_all(&serve_dir).unwrap();
    let dead = serve_dir.join("serve-1.jsonl");
    let start = super::super::lifecycle::job_start_line(
        "eeee0005",
        "tester",
        "general",
        RunMode::Single,
        "smollm2",
        "2026-01-02T03:04:05.000Z",
    );
    let text = format!("{}\n", serde_json::to_string(&start).unwrap());
    let key = crate::session::key::session_key().unwrap();
    std::fs::write(&dead, crate::session::chain::reseal(key, &text).unwrap()).unwrap();

    let jobs = Jobs::new(config(dir.path()), Some(serve_dir.join("serve-2.jsonl"))).unwrap();
    let marked = jobs.recover_interrupted(&serve_dir).unwrap();
    assert_eq!(marked.len(), 1);
    let listed = jobs.list();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].job_id, JobId("eeee0005".into()));
    assert_eq!(listed[0].state, JobState::Interrupted);

    let items = parse_session(&std::fs::read_to_string(&dead).unwrap());
    let endings: Vec<_> = items
        .iter()
        .filter_map(|i| match i {
            crate::session::read::ReadItem::Line(l) => match &l.entry {
                SessionEntry::AgentEvent(e) if e.event_type != LifecycleEvent::Start => {
                    Some(e.clone())
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(endings.len(), 1);
    assert!(is_interrupted_line(&endings[0]));
}

#[tokio::test]
async fn a_job_without_tasks_is_refused_and_unknown_ids_are_answered() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = Jobs::new(config(dir.path()), None).unwrap();
    let empty = jobs.start(JobRequest {
        mode: RunMode::Parallel,
        requests: Vec::new(),
        concurrency: None,
        background: true,
    });
    assert!(matches!(empty, Err(JobsError::Empty)));
    let unknown = JobId("00000000".into());
    assert!(jobs.status(&unknown).is_none());
    assert!(!jobs.cancel(&unknown));
    assert!(jobs.wait(&unknown).await.is_none());
    assert!(jobs.list().is_empty());
}
