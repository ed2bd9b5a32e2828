use std::time::SystemTime;

use super::*;
use crate::request::WorkerCommand;

fn config(sessions_dir: &std::path::Path) -> SupervisorConfig {
    SupervisorConfig::new(
        WorkerCommand {
            program: "/bin/false".into(),
            args: Vec::new(),
        },
        sessions_dir.to_owned(),
    )
}

#[tokio::test]
async fn a_run_id_whose_session_file_exists_is_replaced_by_a_fresh_one() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let now = SystemTime::now();
    let taken = SessionPaths::new(dir.path(), "aaaaaaaa", "general", now);
    std::fs::create_dir_all(taken.session_file.parent().unwrap()).unwrap();
    std::fs::write(&taken.session_file, "someone else's run\n").unwrap();
    let mut ids = ["aaaaaaaa", "bbbbbbbb"].into_iter().map(String::from);
    let (run_id, paths, created) =
        create_session_file(&config, "general", now, || ids.next().unwrap());
    assert_eq!(run_id, "bbbbbbbb");
    let writer = created.unwrap();
    writer.close().await.unwrap();
    assert!(paths.session_file.exists());
    assert_eq!(
        std::fs::read_to_string(&taken.session_file).unwrap(),
        "someone else's run\n",
        "the other run's file is untouched"
    );
}

#[tokio::test]
async fn collisions_give_up_after_a_bounded_number_of_ids() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let now = SystemTime::now();
    let taken = SessionPaths::new(dir.path(), "aaaaaaaa", "general", now);
    std::fs::create_dir_all(taken.session_file.parent().unwrap()).unwrap();
    std::fs::write(&taken.session_file, "").unwrap();
    let mut calls = 0;
    let (_, _, created) = create_session_file(&config, "general", now, || {
        calls += 1;
        "aaaaaaaa".to_owned()
    });
    assert!(created.unwrap_err().already_exists());
    assert_eq!(calls, RUN_ID_ATTEMPTS);
}
