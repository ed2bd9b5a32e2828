//! The model the doc examples run against: an OpenAI Chat Completions
//! server on 127.0.0.1 that answers every request at once, so a doc's
//! commands run in any number and order, and its answers are the ones the
//! docs print (`Name three primes` gets `2, 3 and 5.`).
//!
//! Unlike [`super::scripted_model::ScriptedModel`], which serves a fixed
//! queue of turns to one test, this one decides each answer from the
//! request: a run offered `report_back` gets a call to it with arguments
//! made from its schema (the first turn), everything else a text answer
//! looked up by the task's words. `GET .../models` lists the one model the
//! docs name, for `subagent doctor`. The server stops when dropped and in
//! any case after [`SERVER_LIFETIME`].

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use super::scripted_model::{
    read_http_request, send_status, send_stream, text_turn_with, tool_call_turn,
};

/// Longest the server lives: beyond every doc's examples (a few seconds
/// each), short enough that a hung test frees the port soon.
pub const SERVER_LIFETIME: Duration = Duration::from_secs(600);

/// The model the docs name (`--model smollm2`).
pub const MODEL: &str = "smollm2";

/// The answer to a task containing the first words, else [`DEFAULT_ANSWER`];
/// each answer streams as its first word, then the rest (the first `delta`
/// docs/call.md and README show).
const ANSWERS: [(&str, &str); 2] = [
    ("Name three primes", "2, 3 and 5."),
    ("Where is main?", "main is in src/main.rs."),
];

const DEFAULT_ANSWER: &str = "Done.";

/// A running docs model.
pub struct DocsModel {
    addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
}

impl DocsModel {
    pub fn start() -> Self {
        let (runtime, listener, addr) = super::support::loopback_server();
        runtime.spawn(async move {
            let _ = tokio::time::timeout(SERVER_LIFETIME, accept_all(listener)).await;
        });
        Self {
            addr,
            runtime: Some(runtime),
        }
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }
}

impl Drop for DocsModel {
    fn drop(&mut self) {
        // Not a plain drop: that blocks, and panics inside an async context.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

async fn accept_all(listener: TcpListener) {
    loop {
        let Ok((socket, _)) = listener.accept().await else {
            return;
        };
        tokio::spawn(answer(socket));
    }
}

async fn answer(mut socket: TcpStream) {
    let Some((method, path, body)) = read_http_request(&mut socket, false).await else {
        return;
    };
    if method == "GET" && path.ends_with("/models") {
        let list = json!({"object": "list", "data": [{"id": MODEL, "object": "model"}]});
        let _ = send_json(&mut socket, &list).await;
        return;
    }
    if !path.ends_with("/chat/completions") {
        let _ = send_status(&mut socket, 404, "docs model: only chat/completions").await;
        return;
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let no_pauses = Semaphore::new(0);
    let _ = send_stream(&mut socket, &reply(&request), &no_pauses).await;
}

/// The turn that answers `request` (see the module doc).
fn reply(request: &Value) -> Vec<u8> {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let tool_answered = messages.iter().any(|m| m["role"] == "tool");
    let report_back = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["function"]["name"] == "report_back");
    if let (Some(tool), false) = (report_back, tool_answered) {
        let arguments = example_of(&tool["function"]["parameters"]);
        return tool_call_turn("call_docs_1", "report_back", &arguments);
    }
    let task = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    let text = ANSWERS
        .iter()
        .find(|(asked, _)| task.contains(asked))
        .map_or(DEFAULT_ANSWER, |(_, answer)| answer);
    let (first, rest) = text.split_once(' ').unwrap_or((text, ""));
    let rest = if rest.is_empty() {
        String::new()
    } else {
        format!(" {rest}")
    };
    let usage = json!({"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25});
    text_turn_with(&[first, &rest], "stop", usage)
}

/// A value that validates against `schema`, for the schemas the docs write
/// (objects of strings, numbers, booleans, arrays, enums).
fn example_of(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    match schema["type"].as_str().unwrap_or("object") {
        "object" => {
            let properties = schema["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            properties
                .iter()
                .map(|(name, property)| (name.clone(), example_of(property)))
                .collect::<serde_json::Map<_, _>>()
                .into()
        }
        "array" => json!([]),
        "integer" | "number" => json!(1),
        "boolean" => json!(true),
        _ => json!("example"),
    }
}

async fn send_json(socket: &mut TcpStream, body: &Value) -> std::io::Result<()> {
    let body = body.to_string();
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(body.as_bytes()).await?;
    socket.shutdown().await
}
