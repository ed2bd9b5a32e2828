use std::sync::Mutex;

use pretty_assertions::assert_eq;
use subagent_protocol::message::LogLevel;

use super::*;

#[test]
fn turns_and_tools_become_progress_and_text_does_not() {
    let events = [
        WorkerEvent::TurnStart { turn: 2 },
        WorkerEvent::ToolCall {
            turn: 2,
            call_id: "c1".into(),
            name: "bash_read".into(),
            arguments_json: r#"{"path":"secret.txt"}"#.into(),
        },
        WorkerEvent::ToolResult {
            call_id: "c1".into(),
            name: "bash_read".into(),
            output: "file contents".into(),
            is_error: true,
        },
        WorkerEvent::TextDelta {
            text: "hello".into(),
        },
        WorkerEvent::Log {
            level: LogLevel::Info,
            message: "m".into(),
        },
    ];
    let mapped: Vec<_> = events
        .iter()
        .map(|e| ProgressEvent::of_worker_event("r1", e))
        .collect();
    assert_eq!(
        mapped,
        vec![
            Some(ProgressEvent::Turn {
                run_id: "r1".into(),
                turn: 2
            }),
            Some(ProgressEvent::ToolStarted {
                run_id: "r1".into(),
                name: "bash_read".into()
            }),
            Some(ProgressEvent::ToolFinished {
                run_id: "r1".into(),
                name: "bash_read".into(),
                is_error: true
            }),
            None,
            None,
        ]
    );
}

#[test]
fn usage_counts_input_as_the_result_does_and_the_cache_on_its_own() {
    let total = Usage {
        input: 100,
        output: 7,
        cache_read: 20,
        cache_write: 3,
        cost: 0.25,
        turns: 2,
    };
    assert_eq!(
        ProgressEvent::usage("r1", &total, Some("stop")),
        ProgressEvent::Usage {
            run_id: "r1".into(),
            input_tokens: 100,
            cached_input_tokens: 23,
            output_tokens: 7,
            cost: 0.25,
            cut_by_max_tokens: false,
        }
    );
    let cut = ProgressEvent::usage("r1", &total, Some("length"));
    assert!(matches!(
        cut,
        ProgressEvent::Usage {
            cut_by_max_tokens: true,
            ..
        }
    ));
}

#[test]
fn a_sink_hands_every_event_to_its_callback_and_debug_hides_it() {
    let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
    let into = std::sync::Arc::clone(&seen);
    let sink = ProgressSink::new(move |e| into.lock().unwrap().push(e.run_id().to_owned()));
    sink.clone().emit(&ProgressEvent::Ended {
        run_id: "a".into(),
        error: None,
    });
    sink.emit(&ProgressEvent::Turn {
        run_id: "b".into(),
        turn: 1,
    });
    assert_eq!(*seen.lock().unwrap(), vec!["a".to_owned(), "b".to_owned()]);
    assert_eq!(format!("{sink:?}"), "ProgressSink(..)");
}

#[test]
fn content_events_carry_masked_text_calls_and_results_and_nothing_else() {
    let mask = |t: &str| t.replace("sk-secret", "***");
    let text = WorkerEvent::TextDelta {
        text: "key sk-secret".into(),
    };
    assert_eq!(
        ContentEvent::of_worker_event("r1", &text, mask),
        Some(ContentEvent::TextDelta {
            run_id: "r1".into(),
            text: "key ***".into(),
        })
    );
    let call = WorkerEvent::ToolCall {
        turn: 1,
        call_id: "c1".into(),
        name: "bash_read".into(),
        arguments_json: r#"{"path":"a"}"#.into(),
    };
    let Some(ContentEvent::ToolCall {
        call_id,
        name,
        arguments_json,
        ..
    }) = ContentEvent::of_worker_event("r1", &call, mask)
    else {
        panic!("a tool call is content");
    };
    assert_eq!(
        (call_id.as_str(), name.as_str(), arguments_json.as_str()),
        ("c1", "bash_read", r#"{"path":"a"}"#)
    );
    assert_eq!(
        ContentEvent::of_worker_event("r1", &WorkerEvent::TurnStart { turn: 2 }, mask),
        None
    );
}
