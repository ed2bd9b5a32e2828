use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_protocol::Usage;
use subagent_protocol::session::ToolCallLine;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::*;

fn tool_turn() -> RecordedTurn {
    RecordedTurn {
        turn: 1,
        text: "Reading.".into(),
        stop_reason: "tool_calls".into(),
        usage: Usage {
            input: 20,
            output: 5,
            cache_read: 3,
            ..Usage::default()
        },
        tool_calls: vec![
            ToolCallLine {
                turn: 1,
                call_id: "call_read".into(),
                name: "bash_read".into(),
                args: json!({"path": "notes.txt"}),
            },
            ToolCallLine {
                turn: 1,
                call_id: "call_raw".into(),
                name: "bash_find".into(),
                args: json!({"_raw": "{not json"}),
            },
        ],
        tool_results: vec![],
    }
}

/// The `data:` payloads of an SSE body, `[DONE]` as a string.
fn events(sse: &str) -> Vec<Value> {
    sse.split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap_or_else(|_| Value::String(d.to_owned())))
        .collect()
}

#[test]
fn a_turn_streams_its_text_calls_stop_reason_and_usage() {
    let ev = events(&turn_stream(&tool_turn(), "m"));
    assert_eq!(ev[0]["choices"][0]["delta"]["content"], "Reading.");
    let call = |i: usize| ev[i]["choices"][0]["delta"]["tool_calls"][0].clone();
    assert_eq!(
        call(1),
        json!({"index": 0, "id": "call_read", "type": "function",
            "function": {"name": "bash_read", "arguments": r#"{"path":"notes.txt"}"#}})
    );
    // Arguments that were no JSON object go back as the model sent them.
    assert_eq!(call(2)["function"]["arguments"], "{not json");
    assert_eq!(call(2)["index"], 1);
    assert_eq!(ev[3]["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(
        ev[4]["usage"],
        json!({"prompt_tokens": 23, "completion_tokens": 5, "total_tokens": 28,
            "prompt_tokens_details": {"cached_tokens": 3}})
    );
    assert_eq!(ev[5], "[DONE]");
    assert!(ev.iter().take(5).all(|e| e["model"] == "m"));
}

#[test]
fn an_empty_stop_reason_sends_no_finish_chunk() {
    let mut turn = tool_turn();
    turn.stop_reason.clear();
    turn.tool_calls.clear();
    let ev = events(&turn_stream(&turn, "m"));
    assert_eq!(ev.len(), 3, "text, usage, [DONE]: {ev:#?}");
    assert!(
        ev.iter()
            .all(|e| e["choices"][0]["finish_reason"].is_null())
    );
}

async fn post(base_url: &str, path: &str, body: &str) -> (u16, String) {
    let addr = base_url
        .trim_start_matches("http://")
        .trim_end_matches("/v1");
    let mut socket = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST /v1{path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    socket.read_to_string(&mut answer).await.unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer.split_once("\r\n\r\n").unwrap().1.to_owned();
    (status, body)
}

#[tokio::test]
async fn serves_the_turns_in_order_then_says_the_recording_ended() {
    let server = ReplayServer::start(vec![tool_turn()], "m".into())
        .await
        .unwrap();
    assert!(server.base_url().starts_with("http://127.0.0.1:"));
    let (status, body) = post(&server.base_url(), "/chat/completions", "{}").await;
    assert_eq!(status, 200);
    assert_eq!(body, turn_stream(&tool_turn(), "m"));
    assert_eq!((server.turns_served(), server.asked_past_end()), (1, false));

    let (status, body) = post(&server.base_url(), "/chat/completions", "{}").await;
    assert_eq!(status, 400);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        body["error"]["message"],
        "replay: the recorded run ended after 1 turns; the replay asked for turn 2"
    );
    assert_eq!((server.turns_served(), server.asked_past_end()), (1, true));
    server.stop().await;
}

#[tokio::test]
async fn other_paths_and_oversized_bodies_are_refused_without_using_a_turn() {
    let server = ReplayServer::start(vec![tool_turn()], "m".into())
        .await
        .unwrap();
    let (status, _) = post(&server.base_url(), "/models", "{}").await;
    assert_eq!(status, 404);
    let addr = server
        .base_url()
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_owned();
    let mut socket = TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\ncontent-length: {}\r\n\r\n",
        MAX_BODY_BYTES + 1
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    let mut answer = String::new();
    socket.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert_eq!((server.turns_served(), server.asked_past_end()), (0, false));
    server.stop().await;
}

#[tokio::test]
async fn a_stopped_server_accepts_nothing() {
    let server = ReplayServer::start(vec![], "m".into()).await.unwrap();
    let addr = server
        .base_url()
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_owned();
    server.stop().await;
    assert!(TcpStream::connect(&addr).await.is_err());
}
