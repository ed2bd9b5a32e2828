//! The replay provider: a loopback HTTP server speaking the OpenAI Chat
//! Completions streaming dialect, answering each POST with the next recorded
//! assistant turn (text, tool calls with their recorded ids, names and
//! arguments, usage, stop reason).
//!
//! The worker's own `openai-chat` client talks to it unchanged, so a replay
//! goes down the same path as a live run whatever provider the recording
//! used: recorded turns are provider-neutral. When the recording is used up
//! the answer is a 400 (which the worker does not retry) saying so, and the
//! server remembers it was asked.
//!
//! It binds 127.0.0.1 only, bounds what it reads of a request, ignores the
//! request's content (the comparison is made on the session files, not
//! here), and stops, with every connection it accepted, in [`ReplayServer::stop`]
//! or when dropped. It must never serve anything but the recording.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::recording::RecordedTurn;

/// Bytes of request head read before the request is refused (64 KiB): the
/// worker's head is a few hundred bytes.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Bytes of request body read before the request is refused (32 MiB): the
/// body is the whole conversation, which grows by a capped tool result per
/// call, so a long recorded run stays far below this.
const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// How long one connection may take to send its request (30 s): the worker
/// sends at once; this only frees a slot held by a stuck client.
const REQUEST_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ReplayServerError {
    /// Binding 127.0.0.1 failed.
    #[error("cannot listen on 127.0.0.1 for the replay provider: {0}")]
    Bind(#[source] std::io::Error),
}

/// What the connections share: the turns and how far they were served.
struct Served {
    turns: Vec<RecordedTurn>,
    model: String,
    next: AtomicUsize,
    asked_past_end: AtomicBool,
}

/// A running replay provider.
pub struct ReplayServer {
    addr: SocketAddr,
    served: Arc<Served>,
    stop: CancellationToken,
    accept: Option<tokio::task::JoinHandle<()>>,
}

impl ReplayServer {
    /// Listens on 127.0.0.1 (an ephemeral port) and serves `turns` in order;
    /// `model` is the model id the chunks name.
    pub async fn start(turns: Vec<RecordedTurn>, model: String) -> Result<Self, ReplayServerError> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(ReplayServerError::Bind)?;
        let addr = listener.local_addr().map_err(ReplayServerError::Bind)?;
        let served = Arc::new(Served {
            turns,
            model,
            next: AtomicUsize::new(0),
            asked_past_end: AtomicBool::new(false),
        });
        let stop = CancellationToken::new();
        let accept = tokio::spawn(accept_all(listener, Arc::clone(&served), stop.clone()));
        Ok(Self {
            addr,
            served,
            stop,
            accept: Some(accept),
        })
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL for an `openai-chat` provider.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Model requests answered with a recorded turn.
    pub fn turns_served(&self) -> usize {
        self.served
            .next
            .load(Ordering::SeqCst)
            .min(self.served.turns.len())
    }

    /// True once a request came after the last recorded turn.
    pub fn asked_past_end(&self) -> bool {
        self.served.asked_past_end.load(Ordering::SeqCst)
    }

    /// Stops listening and ends every open connection.
    pub async fn stop(mut self) {
        self.stop.cancel();
        if let Some(accept) = self.accept.take() {
            let _ = accept.await;
        }
    }
}

impl Drop for ReplayServer {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(accept) = self.accept.take() {
            accept.abort();
        }
    }
}

async fn accept_all(listener: TcpListener, served: Arc<Served>, stop: CancellationToken) {
    // Dropping the set when the loop ends aborts connections still open.
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            accepted = listener.accept() => {
                let Ok((socket, _)) = accepted else { return };
                connections.spawn(answer(socket, Arc::clone(&served)));
            }
            // Reap finished connections so the set does not grow.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

async fn answer(mut socket: TcpStream, served: Arc<Served>) {
    let request = tokio::time::timeout(REQUEST_READ_TIMEOUT, read_request(&mut socket)).await;
    let reply = match request {
        Ok(Ok(path)) if path.ends_with("/chat/completions") => {
            let index = served.next.fetch_add(1, Ordering::SeqCst);
            match served.turns.get(index) {
                Some(turn) => Reply::Stream(turn_stream(turn, &served.model)),
                None => {
                    served.asked_past_end.store(true, Ordering::SeqCst);
                    Reply::Status(400, recording_ended_message(served.turns.len()))
                }
            }
        }
        Ok(Ok(path)) => Reply::Status(404, format!("replay provider: no such endpoint {path}")),
        Ok(Err(refusal)) => Reply::Status(refusal.status, refusal.message.to_owned()),
        Err(_) => return,
    };
    let _ = match reply {
        Reply::Stream(sse) => send_stream(&mut socket, &sse).await,
        Reply::Status(status, message) => send_status(&mut socket, status, &message).await,
    };
}

/// What the worker is told when it asks for more turns than were recorded.
pub fn recording_ended_message(recorded: usize) -> String {
    format!(
        "replay: the recorded run ended after {recorded} turns; the replay asked for turn {}",
        recorded + 1
    )
}

enum Reply {
    Stream(String),
    Status(u16, String),
}

/// A request that is not read to its end.
#[derive(Clone, Copy)]
struct Refusal {
    status: u16,
    message: &'static str,
}

/// Reads one request (head and body, both bounded) and returns its path.
async fn read_request(socket: &mut TcpStream) -> Result<String, Refusal> {
    let malformed = Refusal {
        status: 400,
        message: "replay provider: malformed request",
    };
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let head_end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        if buf.len() > MAX_HEAD_BYTES {
            return Err(Refusal {
                status: 431,
                message: "replay provider: request head too large",
            });
        }
        let n = socket.read(&mut chunk).await.map_err(|_| malformed)?;
        if n == 0 {
            return Err(malformed);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut request_line = head.split(' ');
    let (Some("POST"), Some(path)) = (request_line.next(), request_line.next()) else {
        return Err(Refusal {
            status: 405,
            message: "replay provider: only POST is served",
        });
    };
    let length: usize = head
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse().ok())
        .ok_or(Refusal {
            status: 411,
            message: "replay provider: content-length required",
        })?;
    if length > MAX_BODY_BYTES {
        return Err(Refusal {
            status: 413,
            message: "replay provider: request body too large",
        });
    }
    // The body is read to its end (so the client sees our answer, not a
    // reset) but not kept: the replay does not depend on it.
    let mut read = buf.len() - head_end;
    while read < length {
        let n = socket.read(&mut chunk).await.map_err(|_| malformed)?;
        if n == 0 {
            return Err(malformed);
        }
        read += n;
    }
    Ok(path.to_owned())
}

/// The SSE body of one recorded turn, in the chunk format of the OpenAI
/// Chat Completions stream: text, one chunk per tool call (arguments whole),
/// the finish reason, usage, `[DONE]`.
pub fn turn_stream(turn: &RecordedTurn, model: &str) -> String {
    let chunk = |choices: Value, usage: Value| {
        json!({
            "id": format!("chatcmpl-replay-{}", turn.turn),
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": choices,
            "usage": usage,
        })
    };
    let delta = |delta: Value, finish: Value| {
        chunk(
            json!([{"index": 0, "delta": delta, "finish_reason": finish}]),
            Value::Null,
        )
    };
    let mut events = vec![delta(
        json!({"role": "assistant", "content": turn.text}),
        Value::Null,
    )];
    for (index, call) in turn.tool_calls.iter().enumerate() {
        events.push(delta(
            json!({"tool_calls": [{
                "index": index,
                "id": call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": arguments_text(&call.args)},
            }]}),
            Value::Null,
        ));
    }
    // An empty recorded stop reason is what a stream without a finish
    // reason decodes to, so none is sent.
    if !turn.stop_reason.is_empty() {
        events.push(delta(json!({}), json!(turn.stop_reason)));
    }
    let usage = &turn.usage;
    events.push(chunk(
        json!([]),
        json!({
            "prompt_tokens": usage.input + usage.cache_read,
            "completion_tokens": usage.output,
            "total_tokens": usage.input + usage.cache_read + usage.output,
            "prompt_tokens_details": {"cached_tokens": usage.cache_read},
        }),
    ));
    let mut sse: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    sse.push_str("data: [DONE]\n\n");
    sse
}

/// The arguments as the model sent them: a recorded object as JSON, and the
/// `{"_raw": ...}` wrapper the supervisor puts around arguments that were no
/// JSON object unwrapped again.
fn arguments_text(args: &Value) -> String {
    match args
        .as_object()
        .and_then(|o| o.get("_raw").filter(|_| o.len() == 1))
    {
        Some(Value::String(raw)) => raw.clone(),
        Some(other) => other.to_string(),
        None => args.to_string(),
    }
}

async fn send_stream(socket: &mut TcpStream, sse: &str) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n",
        sse.len()
    );
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(sse.as_bytes()).await?;
    socket.shutdown().await
}

async fn send_status(socket: &mut TcpStream, status: u16, message: &str) -> std::io::Result<()> {
    let body = json!({"error": {"message": message, "type": "replay"}}).to_string();
    let head = format!(
        "HTTP/1.1 {status} Replay\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(body.as_bytes()).await?;
    socket.shutdown().await
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
