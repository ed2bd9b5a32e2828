//! A scripted OpenAI Chat Completions server on 127.0.0.1 for end-to-end
//! runs that need tool calls: SmolLM2 does not emit them, so these turns are
//! written out here, in the streamed wire format of
//! `crates/worker/tests/fixtures/openai_chat_tool_calls.sse`.
//!
//! Each `POST /v1/chat/completions` gets the next scripted SSE stream, sent
//! chunk-encoded one event per chunk; every request body is recorded for the
//! test to assert on. When the script is used up the answer is a 400, which
//! the worker does not retry. The server owns its runtime, so synchronous
//! tests can use it while they wait on a child process, and it stops by
//! itself: when dropped, and in any case after [`SERVER_LIFETIME`].
//!
//! [`ScriptedModel::start_held`] holds every reply until the test calls
//! [`ScriptedModel::release`], so a test can look at a run in flight (its
//! status line) at a point it chooses, without sleeping;
//! [`ScriptedModel::wait_for_requests`] waits until a number of requests
//! has arrived (a nested subagent's first turn, say). A reply may also stop
//! part-way: at a [`PAUSE`] event the stream waits until the test calls
//! [`ScriptedModel::resume_stream`], so a test can look at a turn that is
//! still streaming.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use subagent_test_support::http::read_request_async;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// Longest the server lives: beyond any run of these tests (their
/// subagents get 60 s), short enough that a hung test frees the port soon.
pub const SERVER_LIFETIME: Duration = Duration::from_secs(120);

/// An SSE comment event that a reply may hold: the stream stops there,
/// after everything before it was sent, until
/// [`ScriptedModel::resume_stream`]; it is not sent itself.
pub const PAUSE: &str = ": pause\n\n";

#[derive(Default)]
struct Script {
    replies: VecDeque<Vec<u8>>,
    requests: Vec<Value>,
}

/// A running scripted model.
pub struct ScriptedModel {
    addr: SocketAddr,
    script: Arc<Mutex<Script>>,
    /// Notified whenever a request is recorded.
    arrived: Arc<Condvar>,
    /// With [`Self::start_held`]: one permit per reply the test released.
    gate: Option<Arc<Semaphore>>,
    /// One permit per [`PAUSE`] the test let go.
    pauses: Arc<Semaphore>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl ScriptedModel {
    /// Serves `replies` (SSE bodies, see [`tool_call_turn`] and
    /// [`text_turn`]) in order, one per request.
    pub fn start(replies: Vec<Vec<u8>>) -> Self {
        Self::serve(replies, None)
    }

    /// Like [`Self::start`], but each reply waits until [`Self::release`]
    /// lets it go (one call, one reply); the request is recorded on arrival.
    pub fn start_held(replies: Vec<Vec<u8>>) -> Self {
        Self::serve(replies, Some(Arc::new(Semaphore::new(0))))
    }

    /// Lets a reply stopped at a [`PAUSE`] go on.
    pub fn resume_stream(&self) {
        self.pauses.add_permits(1);
    }

    /// Lets the next held reply go (with [`Self::start_held`]).
    pub fn release(&self) {
        if let Some(gate) = &self.gate {
            gate.add_permits(1);
        }
    }

    fn serve(replies: Vec<Vec<u8>>, gate: Option<Arc<Semaphore>>) -> Self {
        let (runtime, listener, addr) = super::support::loopback_server();
        let script = Arc::new(Mutex::new(Script {
            replies: replies.into(),
            requests: Vec::new(),
        }));
        let shared = Arc::clone(&script);
        let held = gate.clone();
        let arrived = Arc::new(Condvar::new());
        let notify = Arc::clone(&arrived);
        let pauses = Arc::new(Semaphore::new(0));
        let paused = Arc::clone(&pauses);
        runtime.spawn(async move {
            let _ = tokio::time::timeout(
                SERVER_LIFETIME,
                accept_all(listener, shared, held, notify, paused),
            )
            .await;
        });
        Self {
            addr,
            script,
            arrived,
            gate,
            pauses,
            runtime: Some(runtime),
        }
    }

    /// `subagent run` with the real worker (the one next to `subagent`)
    /// against this model in `workspace`, session files under `sessions`,
    /// stdin closed; callers add the task and flags.
    pub fn run_command(&self, workspace: &Path, sessions: &Path) -> Command {
        let mut c = Command::new(super::support::binary("subagent"));
        c.arg("run")
            .args(["--provider", "openai-chat", "--model", "scripted"])
            .arg("--base-url")
            .arg(self.base_url())
            .arg("--workspace")
            .arg(workspace)
            .arg("--sessions-dir")
            .arg(sessions)
            .env_remove("SUBAGENT_WORKER")
            .stdin(Stdio::null());
        c
    }

    /// `http://127.0.0.1:PORT/v1`, for `--base-url`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request body received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.script.lock().unwrap().requests.clone()
    }

    /// Waits until at least `n` requests have arrived; false when `timeout`
    /// passed first.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        let script = self.script.lock().unwrap();
        let (script, _) = self
            .arrived
            .wait_timeout_while(script, timeout, |s| s.requests.len() < n)
            .unwrap();
        script.requests.len() >= n
    }

    /// Replies not yet served.
    pub fn replies_left(&self) -> usize {
        self.script.lock().unwrap().replies.len()
    }
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        // Not a plain drop: that blocks, and panics inside an async context.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

async fn accept_all(
    listener: TcpListener,
    script: Arc<Mutex<Script>>,
    gate: Option<Arc<Semaphore>>,
    arrived: Arc<Condvar>,
    pauses: Arc<Semaphore>,
) {
    loop {
        let Ok((socket, _)) = listener.accept().await else {
            return;
        };
        tokio::spawn(answer(
            socket,
            Arc::clone(&script),
            gate.clone(),
            Arc::clone(&arrived),
            Arc::clone(&pauses),
        ));
    }
}

async fn answer(
    mut socket: TcpStream,
    script: Arc<Mutex<Script>>,
    gate: Option<Arc<Semaphore>>,
    arrived: Arc<Condvar>,
    pauses: Arc<Semaphore>,
) {
    let Some((path, body)) = read_request(&mut socket).await else {
        return;
    };
    // Only the endpoint itself: a base URL that already held the path
    // (`/v1/chat/completions/chat/completions`) must not get an answer.
    let reply = if path == "/v1/chat/completions" {
        let mut script = script.lock().unwrap();
        script
            .requests
            .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
        arrived.notify_all();
        script.replies.pop_front()
    } else {
        None
    };
    if let (Some(gate), Some(_)) = (&gate, &reply) {
        // One permit per released reply, used up here.
        if let Ok(permit) = gate.acquire().await {
            permit.forget();
        }
    }
    let _ = match reply {
        Some(sse) => send_stream(&mut socket, &sse, &pauses).await,
        None => {
            send_status(
                &mut socket,
                400,
                "scripted model: no reply for this request",
            )
            .await
        }
    };
}

pub(super) async fn send_stream(
    socket: &mut TcpStream,
    sse: &[u8],
    pauses: &Semaphore,
) -> std::io::Result<()> {
    socket
        .write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
              transfer-encoding: chunked\r\nconnection: close\r\n\r\n",
        )
        .await?;
    // One chunk per event, flushed, the way a provider streams them.
    for event in sse
        .split_inclusive(|b| *b == b'\n')
        .collect::<Vec<_>>()
        .chunks(2)
    {
        let piece = event.concat();
        if piece == PAUSE.as_bytes() {
            if let Ok(permit) = pauses.acquire().await {
                permit.forget();
            }
            continue;
        }
        socket
            .write_all(format!("{:x}\r\n", piece.len()).as_bytes())
            .await?;
        socket.write_all(&piece).await?;
        socket.write_all(b"\r\n").await?;
        socket.flush().await?;
    }
    socket.write_all(b"0\r\n\r\n").await?;
    socket.shutdown().await
}

pub(super) async fn send_status(
    socket: &mut TcpStream,
    status: u16,
    message: &str,
) -> std::io::Result<()> {
    let body = json!({"error": {"message": message, "type": "scripted_model"}}).to_string();
    let head = format!(
        "HTTP/1.1 {status} Scripted\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(body.as_bytes()).await?;
    socket.shutdown().await
}

/// The request path and body; `None` for a malformed or oversized request,
/// or one without a `content-length` (the test support's one reader).
pub(super) async fn read_request(socket: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let (_, path, body) = read_http_request(socket, true).await?;
    Some((path, body))
}

/// The method, path and body of one request; `None` for a malformed or
/// oversized one. Without a `content-length` the body is empty, unless
/// `require_length` refuses such a request.
pub(super) async fn read_http_request(
    socket: &mut TcpStream,
    require_length: bool,
) -> Option<(String, String, Vec<u8>)> {
    let request = read_request_async(socket, require_length).await?;
    Some((request.method, request.target, request.body))
}

fn event(data: &Value) -> String {
    format!("data: {data}\n\n")
}

/// The response id of a text turn; a tool-call turn's is
/// [`tool_call_response_id`] of its call id, so each differs.
pub const TEXT_RESPONSE_ID: &str = "chatcmpl-scripted";

/// The response id [`tool_call_turn`] streams for `call_id`.
pub fn tool_call_response_id(call_id: &str) -> String {
    format!("chatcmpl-{call_id}")
}

fn chunk(id: &str, delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "id": id,
        "object": "chat.completion.chunk",
        "created": 1_744_112_711,
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        "usage": null,
    })
}

fn usage_and_done(id: &str) -> String {
    let usage = json!({
        "id": id,
        "object": "chat.completion.chunk",
        "created": 1_744_112_711,
        "model": "scripted",
        "choices": [],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
    });
    format!("{}data: [DONE]\n\n", event(&usage))
}

/// A turn that calls `name` with `arguments` (a JSON object), the arguments
/// streamed in two pieces as real providers split them.
pub fn tool_call_turn(call_id: &str, name: &str, arguments: &Value) -> Vec<u8> {
    let arguments = arguments.to_string();
    let mut cut = arguments.len() / 2;
    while !arguments.is_char_boundary(cut) {
        cut -= 1;
    }
    let (first, second) = arguments.split_at(cut);
    let id = tool_call_response_id(call_id);
    let mut sse = event(&chunk(
        &id,
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "index": 0, "id": call_id, "type": "function",
            "function": {"name": name, "arguments": ""}}]}),
        None,
    ));
    for piece in [first, second] {
        sse.push_str(&event(&chunk(
            &id,
            json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
            None,
        )));
    }
    sse.push_str(&event(&chunk(&id, json!({}), Some("tool_calls"))));
    sse.push_str(&usage_and_done(&id));
    sse.into_bytes()
}

/// A final turn answering `text`, streamed word by word.
pub fn text_turn(text: &str) -> Vec<u8> {
    let mut sse = event(&chunk(
        TEXT_RESPONSE_ID,
        json!({"role": "assistant", "content": ""}),
        None,
    ));
    for word in text.split_inclusive(' ') {
        sse.push_str(&event(&chunk(
            TEXT_RESPONSE_ID,
            json!({"content": word}),
            None,
        )));
    }
    sse.push_str(&event(&chunk(TEXT_RESPONSE_ID, json!({}), Some("stop"))));
    sse.push_str(&usage_and_done(TEXT_RESPONSE_ID));
    sse.into_bytes()
}

/// A final text turn streamed in `pieces` (a piece may be [`PAUSE`]),
/// ending with `finish_reason` and the usage object `usage` (Chat
/// Completions' shape, e.g. with `prompt_tokens_details.cached_tokens`).
pub fn text_turn_with(pieces: &[&str], finish_reason: &str, usage: Value) -> Vec<u8> {
    let mut sse = event(&chunk(
        TEXT_RESPONSE_ID,
        json!({"role": "assistant", "content": ""}),
        None,
    ));
    for piece in pieces {
        if *piece == PAUSE {
            sse.push_str(PAUSE);
        } else {
            sse.push_str(&event(&chunk(
                TEXT_RESPONSE_ID,
                json!({"content": piece}),
                None,
            )));
        }
    }
    sse.push_str(&event(&chunk(
        TEXT_RESPONSE_ID,
        json!({}),
        Some(finish_reason),
    )));
    let usage = json!({
        "id": TEXT_RESPONSE_ID, "object": "chat.completion.chunk",
        "created": 1_744_112_711, "model": "scripted", "choices": [], "usage": usage,
    });
    sse.push_str(&format!("{}data: [DONE]\n\n", event(&usage)));
    sse.into_bytes()
}

/// The tool names a recorded request offered the model, sorted.
pub fn offered_tools(request: &Value) -> Vec<String> {
    let mut names: Vec<String> = request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The text of the tool result for `call_id` among `request`'s messages.
pub fn tool_result_text(request: &Value, call_id: &str) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .unwrap_or_else(|| panic!("no result for {call_id}: {request}"))["content"]
        .as_str()
        .unwrap()
        .to_owned()
}
