use pretty_assertions::assert_eq;
use subagent_protocol::RunMode;
use subagent_protocol::result::{
    ContentItem, Details, ErrorInfo, Mode, SingleResult, SubagentResult,
};
use subagent_protocol::{ErrorCode, Usage};

use super::*;

/// The binary's numbers for the error codes these tests use.
fn cli_exit(code: Option<ErrorCode>) -> i32 {
    match code {
        None => 0,
        Some(ErrorCode::SubagentTimeout) => 3,
        Some(_) => 1,
    }
}

fn single(error: Option<ErrorCode>) -> SubagentResult {
    SubagentResult {
        content: vec![ContentItem::Text {
            text: "answer".into(),
        }],
        details: Details {
            mode: Mode::Run(RunMode::Single),
            run_id: Some("abcd1234".into()),
            results: vec![SingleResult {
                agent: "general".into(),
                task: "t".into(),
                exit_code: 0,
                usage: Usage {
                    input: 10,
                    output: 5,
                    ..Usage::default()
                },
                error: None,
                session_file: Some("s.jsonl".into()),
                output: Some("full answer".into()),
                structured_output: None,
                display_items: None,
                model: Some("m".into()),
                duration_ms: Some(7),
                stop_reason: None,
                limit: None,
                truncated: None,
                termination: None,
                sandbox: None,
                continued_from: None,
                changes: None,
                todos: None,
            }],
            error: error.map(|code| ErrorInfo {
                code,
                message: "it broke".into(),
            }),
        },
    }
}

#[test]
fn a_line_carries_status_cli_exit_output_and_session_file() {
    let ok = ResultLine::from_result("a", "general", &single(None), 12, cli_exit);
    assert_eq!(ok.status, TaskStatus::Ok);
    assert_eq!(ok.cli_exit, 0);
    assert_eq!(ok.output.as_deref(), Some("full answer"));
    assert_eq!(ok.session_file.as_deref(), Some("s.jsonl"));
    assert_eq!(ok.duration_ms, 12);
    let json = serde_json::to_value(&ok).unwrap();
    assert_eq!(json["usage"]["input"], 10);
    assert_eq!(json["cliExit"], 0);
    assert!(json.get("exitCode").is_none(), "{json}");
    assert!(json.get("errorCode").is_none());
    assert!(json.get("fullOutputPath").is_none(), "output was not cut");

    let late = ResultLine::from_result(
        "b",
        "general",
        &single(Some(ErrorCode::SubagentTimeout)),
        1,
        cli_exit,
    );
    assert_eq!((late.status, late.cli_exit), (TaskStatus::Timeout, 3));
    let json = serde_json::to_value(&late).unwrap();
    assert_eq!(json["errorCode"], "SUBAGENT_TIMEOUT");
    assert_eq!(json["error"], "it broke");

    let bad = ResultLine::from_result(
        "c",
        "general",
        &single(Some(ErrorCode::SubagentFailed)),
        1,
        cli_exit,
    );
    assert_eq!((bad.status, bad.cli_exit), (TaskStatus::Failed, 1));
}

#[test]
fn a_torn_last_line_is_not_done_and_is_cut_before_appending() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    std::fs::write(&path, "{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"c\",\"sta").unwrap();
    let (file, mut writer) = ResultsFile::open(&path).unwrap();
    assert!(file.dropped_torn_tail);
    let mut done: Vec<&str> = file.done.iter().map(String::as_str).collect();
    done.sort_unstable();
    assert_eq!(done, vec!["a", "b"]);
    writer
        .append(&ResultLine::from_result(
            "c",
            "general",
            &single(None),
            1,
            cli_exit,
        ))
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let ids: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(ids, vec!["a", "b", "c"]);
}

#[test]
fn a_missing_file_is_created_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.jsonl");
    let (file, _writer) = ResultsFile::open(&path).unwrap();
    assert!(file.done.is_empty() && !file.dropped_torn_tail);
    assert!(path.exists());
}

#[test]
fn a_bad_complete_line_is_refused_with_its_number() {
    let err = scan(Path::new("r.jsonl"), b"{\"id\":\"a\"}\nnot json\n").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("r.jsonl, line 2"), "{text}");
    let err = scan(Path::new("r.jsonl"), b"{\"status\":\"ok\"}\n").unwrap_err();
    assert!(err.to_string().contains("line 1"), "{err}");
}

#[test]
fn a_second_batch_on_the_same_results_file_is_refused_until_the_first_ends() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    let (_, first) = ResultsFile::open(&path).unwrap();
    let err = ResultsFile::open(&path).unwrap_err();
    assert!(matches!(err, ResultsError::Locked { .. }), "{err}");
    assert!(err.to_string().contains("is being written by pid"), "{err}");
    drop(first);
    assert!(ResultsFile::open(&path).is_ok());
}

#[test]
fn recorded_failures_and_timeouts_are_known_as_failed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    let lines = [
        r#"{"id":"a","status":"ok"}"#,
        r#"{"id":"b","status":"failed"}"#,
        r#"{"id":"c","status":"timeout"}"#,
        r#"{"id":"d"}"#,
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let (file, _writer) = ResultsFile::open(&path).unwrap();
    assert_eq!(file.done.len(), 4);
    let mut failed: Vec<&str> = file.failed.iter().map(String::as_str).collect();
    failed.sort_unstable();
    assert_eq!(
        failed,
        vec!["b", "c", "d"],
        "a line without a status is not vouched for"
    );
}

#[test]
fn a_line_of_a_cut_answer_names_the_full_output_file() {
    let mut result = single(Some(ErrorCode::SubagentOutputTruncated));
    result.details.results[0].truncated = Some(subagent_protocol::result::Truncation {
        original_bytes: 300_000,
        original_lines: 3000,
        bytes_cut: 299_000,
        full_output_path: Some("/s/abcd1234-general.output.txt".into()),
    });
    let line = ResultLine::from_result("a", "general", &result, 1, cli_exit);
    let json = serde_json::to_value(&line).unwrap();
    assert_eq!(json["fullOutputPath"], "/s/abcd1234-general.output.txt");
}

#[test]
fn a_line_written_with_exit_code_reads_as_cli_exit() {
    let old = r#"{"id":"a","status":"timeout","exitCode":3,"agent":"general","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"cost":0.0,"turns":1},"durationMs":4}"#;
    let line: ResultLine = serde_json::from_str(old).unwrap();
    assert_eq!((line.status, line.cli_exit), (TaskStatus::Timeout, 3));
    let new = serde_json::to_value(&line).unwrap();
    assert_eq!(new["cliExit"], 3);
    assert!(new.get("exitCode").is_none(), "{new}");
    let again: ResultLine = serde_json::from_value(new).unwrap();
    assert_eq!(again, line);
}

fn line(id: &str) -> ResultLine {
    ResultLine::from_result(id, "general", &single(None), 1, cli_exit)
}

fn ids_in(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn a_file_renamed_over_the_results_fails_the_next_append_and_keeps_every_line_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    let (_, mut writer) = ResultsFile::open(&path).unwrap();
    writer.append(&line("a")).unwrap();
    writer.verify().unwrap();
    let forged = dir.path().join("forged");
    std::fs::write(&forged, "{\"id\":\"b\",\"status\":\"ok\"}\n").unwrap();
    std::fs::rename(&forged, &path).unwrap();

    let err = writer.append(&line("b")).unwrap_err();
    let ResultsError::Replaced {
        saved: Ok(saved), ..
    } = &err
    else {
        panic!("{err}");
    };
    assert_eq!(
        saved,
        &dir.path()
            .join(format!("r.jsonl.kept-{}", std::process::id()))
    );
    assert!(
        err.to_string()
            .contains("was replaced while this batch ran"),
        "{err}"
    );
    assert_eq!(ids_in(&std::fs::read_to_string(saved).unwrap()), ["a", "b"]);
    // The forged file is not written to.
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"id\":\"b\",\"status\":\"ok\"}\n"
    );
    // A later append and the end's check say so again; the copy keeps up.
    assert!(writer.append(&line("c")).is_err());
    assert!(matches!(
        writer.verify(),
        Err(ResultsError::Replaced { .. })
    ));
    assert_eq!(
        ids_in(&std::fs::read_to_string(saved).unwrap()),
        ["a", "b", "c"]
    );
}

#[test]
fn a_results_file_removed_after_the_last_append_fails_the_end_check() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    let (_, mut writer) = ResultsFile::open(&path).unwrap();
    writer.append(&line("a")).unwrap();
    std::fs::remove_file(&path).unwrap();
    let err = writer.verify().unwrap_err();
    assert!(
        matches!(err, ResultsError::Replaced { saved: Ok(_), .. }),
        "{err}"
    );
}

#[test]
fn a_results_file_that_is_a_link_or_a_fifo_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::write(&outside, "precious\ntorn").unwrap();
    let link = dir.path().join("r.jsonl");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let err = ResultsFile::open(&link).unwrap_err();
    assert!(err.to_string().contains("is a symbolic link"), "{err}");
    assert!(read_scan(&link).is_err());
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious\ntorn");

    let fifo = dir.path().join("f.jsonl");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let err = ResultsFile::open(&fifo).unwrap_err();
    assert!(err.to_string().contains("is a FIFO"), "{err}");
}

#[test]
fn a_line_over_the_cap_is_refused_with_its_number_and_a_long_torn_tail_dropped() {
    let mut bytes = b"{\"id\":\"a\"}\n".to_vec();
    bytes.extend(std::iter::repeat_n(b' ', RESULT_LINE_CAP + 1));
    let torn = scan(Path::new("r.jsonl"), &bytes).unwrap();
    assert_eq!(
        (torn.lines.len(), torn.valid_len, torn.torn_tail),
        (1, 11, true)
    );
    bytes.push(b'\n');
    let err = scan(Path::new("r.jsonl"), &bytes).unwrap_err();
    assert!(
        err.to_string().contains("r.jsonl, line 2: longer than 64M"),
        "{err}"
    );
}
