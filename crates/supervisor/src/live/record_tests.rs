use super::*;

fn record() -> LiveRecord {
    LiveRecord {
        run_id: "0190aaaabbbbccccddddeeeeffff0000".into(),
        parent_run_id: None,
        agent: "general".into(),
        model: "m".into(),
        state: LiveState::RunningTool,
        tool: Some("python_execute".into()),
        state_since_ms: 2,
        last_event_ms: 3,
        started_ms: 1,
        turns: 2,
        input_tokens: 10,
        cached_input_tokens: 0,
        output_tokens: 5,
        cost: 0.25,
        worker_pid: Some(42),
        supervisor_pid: 41,
        supervisor_start: 99,
        session_file: None,
    }
}

#[test]
fn a_sealed_record_opens_as_it_was() {
    let key = SessionKey::from_bytes([1; 32]);
    let sealed = record().seal(&key);
    assert!(sealed.ends_with(b"\"}\n"));
    assert_eq!(LiveRecord::open(&key, &sealed), Ok(record()));
    // What an older, longer record left after the line is not read.
    let mut with_tail = sealed.clone();
    with_tail.extend_from_slice(b"leftover");
    assert_eq!(LiveRecord::open(&key, &with_tail), Ok(record()));
}

#[test]
fn an_edited_a_foreign_or_an_unsealed_record_does_not_open() {
    let key = SessionKey::from_bytes([1; 32]);
    let sealed = String::from_utf8(record().seal(&key)).unwrap();
    let edited = sealed.replace("\"turns\":2", "\"turns\":3");
    assert_eq!(
        LiveRecord::open(&key, edited.as_bytes()),
        Err(RecordError::BadSeal)
    );
    assert_eq!(
        LiveRecord::open(&SessionKey::from_bytes([2; 32]), sealed.as_bytes()),
        Err(RecordError::BadSeal)
    );
    let plain = format!("{}\n", serde_json::to_string(&record()).unwrap());
    assert_eq!(
        LiveRecord::open(&key, plain.as_bytes()),
        Err(RecordError::Unsealed)
    );
    assert_eq!(LiveRecord::open(&key, b""), Err(RecordError::Unsealed));
    // A session line's chain value is no seal of a record: another domain.
    let (chained, _) = crate::session::chain::seal(
        &key,
        &crate::session::chain::GENESIS,
        b"",
        serde_json::to_string(&record()).unwrap().as_bytes(),
    )
    .unwrap();
    let as_record = String::from_utf8(chained)
        .unwrap()
        .replace("\"chain\":", "\"mac\":");
    assert_eq!(
        LiveRecord::open(&key, as_record.as_bytes()),
        Err(RecordError::BadSeal)
    );
}

#[test]
fn state_words_are_what_ps_shows() {
    assert_eq!(LiveState::WaitingForModel.words(), "waiting for the model");
    assert_eq!(
        serde_json::to_value(LiveState::WaitingForModel).unwrap(),
        "waiting_for_model"
    );
}
