//! The happy paths and the admission checks.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use subagent_supervisor::{GateDecision, RunRequest, SpawnGate, Supervisor};
use tokio_util::sync::CancellationToken;

use super::support::*;

#[tokio::test]
async fn a_successful_run_returns_text_usage_display_items_and_a_complete_session() {
    let f = Fixture::new("success");
    let o = f.run(f.request()).await;
    assert_eq!(o.code(), None, "{:#}", o.json);
    assert_eq!(o.text(), "fixture done: fixture task (success)");
    let s = o.single();
    assert_eq!(s["exitCode"], 0);
    assert_eq!(s["usage"]["input"], 10);
    assert_eq!(s["usage"]["turns"], 1);
    assert_eq!(s["stopReason"], "completed");
    assert_eq!(s["model"], "fixture-model");
    assert_eq!(o.termination(), "exited");
    assert_eq!(s["displayItems"][0]["type"], "toolCall");
    assert_eq!(s["displayItems"][0]["args"]["path"], "README.md");
    assert_eq!(
        s["displayItems"][1],
        serde_json::json!({"type": "text", "text": "working on it"})
    );
    assert_eq!(o.json["details"]["runId"].as_str().unwrap().len(), 32);
    // The session tells the story: header, start, messages, tool call and result, usage, end.
    let types: Vec<&str> = o
        .lines
        .iter()
        .map(|l| l["type"].as_str().unwrap())
        .collect();
    for ty in [
        "session",
        "agent_event",
        "message",
        "tool_call",
        "tool_result",
        "usage",
    ] {
        assert!(types.contains(&ty), "{ty} missing in {types:?}");
    }
    let events: Vec<&str> = o
        .lines_of("agent_event")
        .iter()
        .map(|l| l["eventType"].as_str().unwrap())
        .collect();
    assert_eq!(events, vec!["subagent:start", "subagent:complete"]);
    let end = o.lines.last().unwrap();
    assert_eq!(end["status"], "completed");
    assert_eq!(end["usage"]["input"], 10);
    assert!(end["pid"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn lifecycle_lines_are_appended_to_the_parent_session() {
    let f = Fixture::new("success");
    let parent = f.dir.path().join("parent.jsonl");
    std::fs::write(&parent, "{\"type\":\"session\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"version\":1,\"runId\":\"p\",\"agent\":\"main\",\"task\":\"t\"}\n").unwrap();
    let mut r = f.request();
    r.parent_session = Some(parent.clone());
    let o = f.run(r).await;
    assert_eq!(o.code(), None);
    let lines = check_session_file(&parent);
    let events: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "agent_event")
        .map(|l| l["eventType"].as_str().unwrap())
        .collect();
    assert_eq!(events, vec!["subagent:start", "subagent:complete"]);
    assert_eq!(
        lines.last().unwrap()["sessionFile"],
        o.single()["sessionFile"]
    );
}

#[tokio::test]
async fn the_api_key_reaches_the_worker_in_the_task_spec_not_its_environment() {
    let f = Fixture::new("echo-spec");
    // SAFETY: no other thread of this test reads the environment concurrently.
    unsafe { std::env::set_var("SUBAGENT_TEST_PARENT_SECRET", TEST_API_KEY) };
    let o = f.run(f.request()).await;
    // SAFETY: as the set_var above: no other thread reads the environment.
    unsafe { std::env::remove_var("SUBAGENT_TEST_PARENT_SECRET") };
    assert_eq!(o.code(), None, "{:#}", o.json);
    let report: serde_json::Value =
        serde_json::from_str(o.single()["output"].as_str().unwrap()).unwrap();
    assert_eq!(report["envHasKey"], false);
    let names: Vec<&str> = report["envNames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(!names.contains(&"SUBAGENT_TEST_PARENT_SECRET"), "{names:?}");
    assert!(names.contains(&"SUBAGENT_PROTOCOL_FD"), "{names:?}");
    assert_eq!(report["depth"], 1);
}

#[tokio::test]
async fn children_at_the_depth_limit_get_no_subagent_tool() {
    let f = Fixture::new("echo-spec");
    let mut r = f.request();
    r.tools = Some(vec!["bash_read".into(), "subagent".into()]);
    let o = f.run(r.clone()).await;
    let report: serde_json::Value =
        serde_json::from_str(o.single()["output"].as_str().unwrap()).unwrap();
    assert_eq!(report["tools"], serde_json::json!(["bash_read"]));
    // With room for one more level, the child keeps it.
    r.max_depth = 2;
    let o = f.run(r).await;
    let report: serde_json::Value =
        serde_json::from_str(o.single()["output"].as_str().unwrap()).unwrap();
    assert_eq!(
        report["tools"],
        serde_json::json!(["bash_read", "subagent"])
    );
}

#[tokio::test]
async fn structured_output_is_returned_as_an_object() {
    let f = Fixture::new("structured");
    let mut r = f.request();
    r.output_schema_json =
        Some(r#"{"type":"object","properties":{"capital":{"type":"string"}}}"#.into());
    let o = f.run(r).await;
    assert_eq!(o.code(), None);
    assert_eq!(
        o.single()["structuredOutput"],
        serde_json::json!({"capital": "Paris"})
    );
    assert_eq!(o.single()["stopReason"], "report_back");
}

#[tokio::test]
async fn refusals_come_back_as_results_before_any_process_starts() {
    let f = Fixture::new("success");
    let sup = || Supervisor::new(f.config());
    let cases: Vec<(RunRequest, &str)> = vec![
        (
            {
                let mut r = f.request();
                r.task = "  ".into();
                r
            },
            "INVALID_INPUT",
        ),
        (
            {
                let mut r = f.request();
                r.agent = "nope".into();
                r
            },
            "UNKNOWN_AGENT",
        ),
        (
            {
                let mut r = f.request();
                r.caller_depth = 1;
                r
            },
            "SUBAGENT_DEPTH_EXCEEDED",
        ),
        (
            {
                let mut r = f.request();
                r.output_schema_json = Some("{not json".into());
                r
            },
            "INVALID_INPUT",
        ),
        (
            {
                let mut r = f.request();
                r.output_schema_json = Some(r#"{"type": 12}"#.into());
                r
            },
            "INVALID_INPUT",
        ),
    ];
    for (request, code) in cases {
        let result = sup().run(request, CancellationToken::new()).await;
        let json = serde_json::to_value(&result).unwrap();
        assert_eq!(json["details"]["error"]["code"], code, "{json:#}");
        assert_eq!(json["details"]["mode"], "management");
        assert!(json["details"]["results"].as_array().unwrap().is_empty());
    }
    assert!(
        !f.sessions_dir().exists(),
        "no session file for refused runs"
    );
    let unknown = sup()
        .run(
            {
                let mut r = f.request();
                r.agent = "nope".into();
                r
            },
            CancellationToken::new(),
        )
        .await;
    let text = serde_json::to_value(&unknown).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.contains("Available agents: general"), "{text}");
}

struct DenyAll;
impl SpawnGate for DenyAll {
    fn check(&self, _: &RunRequest) -> GateDecision {
        GateDecision::Deny("budget exhausted for this session".into())
    }
}

#[tokio::test]
async fn the_spawn_gate_and_spawn_cap_refuse_before_spawning() {
    let f = Fixture::new("success");
    let gated = Supervisor::new(f.config()).with_gate(Arc::new(DenyAll));
    let o = f
        .run_with(gated, f.request(), CancellationToken::new())
        .await;
    assert_eq!(o.code(), Some("SUBAGENT_SPAWN_DENIED"));
    assert!(
        o.text().contains("budget exhausted for this session"),
        "{}",
        o.text()
    );

    let mut config = f.config();
    config.max_spawns = Some(1);
    let capped = Supervisor::new(config);
    let first = capped.run(f.request(), CancellationToken::new()).await;
    assert!(first.details.error.is_none());
    let session = first.details.results[0].session_file.as_deref().unwrap();
    assert_reaped(&check_session_file(std::path::Path::new(session)));
    let second =
        serde_json::to_value(capped.run(f.request(), CancellationToken::new()).await).unwrap();
    assert_eq!(second["details"]["error"]["code"], "SUBAGENT_SPAWN_DENIED");
    assert!(
        second["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("spawn cap"),
        "{second}"
    );
    assert_no_survivors(&f.marker);
}

#[tokio::test]
async fn long_output_is_truncated_with_a_marker_and_the_full_text_saved() {
    let f = Fixture::new("big-output");
    let o = f.run(f.request()).await;
    assert_eq!(o.code(), Some("SUBAGENT_OUTPUT_TRUNCATED"));
    assert_eq!(o.single()["exitCode"], 0);
    let text = o.text();
    assert!(text.len() <= 200 * 1024 + 200, "{}", text.len());
    assert!(text.contains("[output truncated:"), "marker missing");
    let path = o.single()["truncated"]["fullOutputPath"].as_str().unwrap();
    let full = std::fs::read_to_string(path).unwrap();
    assert_eq!(full.len(), "all work and no play\n".len() * 20_000);
    // Every copy of the answer in the result is the cut one (issue 26).
    assert_eq!(o.single()["output"].as_str().unwrap(), text);
}

#[tokio::test]
async fn secrets_never_reach_the_result_or_the_session_file() {
    let f = Fixture::new("secrets");
    let o = f.run(f.request()).await;
    let result = o.json.to_string();
    let session = std::fs::read_to_string(o.single()["sessionFile"].as_str().unwrap()).unwrap();
    for secret in [
        TEST_API_KEY,
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "abcdefghijkl123",
    ] {
        assert!(!result.contains(secret), "{secret} in result");
        assert!(!session.contains(secret), "{secret} in session file");
    }
    assert!(
        o.text().contains("~/.env"),
        "home path mapped to ~: {}",
        o.text()
    );
    // The stderr excerpt is recorded (masked).
    assert!(!o.lines_of("output").is_empty());
}

#[tokio::test]
async fn a_child_budget_is_the_smaller_of_its_request_and_the_parents_remainder() {
    let f = Fixture::new("echo-spec");
    let mut r = f.request();
    r.budget = subagent_protocol::Budget {
        max_turns: 50,
        max_cost: None,
    };
    r.parent_remaining = Some(subagent_protocol::Budget {
        max_turns: 3,
        max_cost: Some(0.25),
    });
    let o = f.run(r).await;
    let report: serde_json::Value =
        serde_json::from_str(o.single()["output"].as_str().unwrap()).unwrap();
    assert_eq!(report["maxTurns"], 3);
    assert_eq!(report["maxCost"], 0.25);
}

#[tokio::test]
async fn a_parallel_call_over_the_per_call_limit_is_refused_with_the_numbers() {
    let f = Fixture::new("success");
    let sup = Supervisor::new(f.config());
    let requests = (0..5).map(|_| f.request()).collect();
    let result =
        serde_json::to_value(sup.run_parallel(requests, CancellationToken::new()).await).unwrap();
    assert_eq!(result["details"]["error"]["code"], "INVALID_INPUT");
    let msg = result["details"]["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("5 tasks were requested in one call and the limit is 4 per call"),
        "{msg}"
    );
    assert!(!f.sessions_dir().exists(), "nothing started");
}

#[tokio::test]
async fn a_parallel_call_returns_every_childs_result() {
    let f = Fixture::new("success");
    let sup = Supervisor::new(f.config());
    let requests = (0..3)
        .map(|i| {
            let mut r = f.request();
            r.task = format!("task {i}");
            r
        })
        .collect();
    let result =
        serde_json::to_value(sup.run_parallel(requests, CancellationToken::new()).await).unwrap();
    let errors: Vec<String> = schema("result.schema.json")
        .iter_errors(&result)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(result["details"]["mode"], "parallel");
    assert!(result["details"].get("error").is_none(), "{result:#}");
    let results = result["details"]["results"].as_array().unwrap();
    let tasks: Vec<&str> = results
        .iter()
        .map(|r| r["task"].as_str().unwrap())
        .collect();
    assert_eq!(tasks, vec!["task 0", "task 1", "task 2"]);
    for r in results {
        let lines = check_session_file(std::path::Path::new(r["sessionFile"].as_str().unwrap()));
        assert!(
            lines
                .iter()
                .filter(|l| l["type"] == "agent_event")
                .all(|l| l["mode"] == "parallel")
        );
        assert_reaped(&lines);
    }
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("fixture done: task 0") && text.contains("fixture done: task 2"),
        "{text}"
    );
    assert_no_survivors(&f.marker);
}
