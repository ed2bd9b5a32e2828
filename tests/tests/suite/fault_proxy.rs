//! A fault-injecting HTTP/1.1 proxy on 127.0.0.1, put between the real
//! worker and a real model server (llama-server, or the scripted model) to
//! break the model's side of a run on purpose.
//!
//! Each request takes the next [`Fault`] of the test's plan, then the
//! plan's `then` fault for every request after it, so a test says "two 429s,
//! then forward" or "503 forever". The proxy answers a fault itself
//! (statuses, resets, a 50 MB stream) or forwards the request upstream and
//! damages the streamed answer on its way back (a reset or a cut after some
//! events, a malformed delta, a slow drip). Answers are re-sent chunked, one
//! SSE event per chunk, the way providers stream; every connection carries
//! one request and is closed after it, so a retry is always a new
//! connection and [`FaultProxy::requests`] counts attempts exactly.
//!
//! The proxy owns its runtime, so synchronous tests can use it while they
//! wait on a child process, and it stops by itself: when dropped, and in
//! any case after [`PROXY_LIFETIME`].

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Longest the proxy lives: beyond any run of the fault tests (they take
/// seconds, and are killed after 150 s), below nextest's 5-minute kill, so
/// a hung test's proxy goes first.
pub const PROXY_LIFETIME: Duration = Duration::from_secs(240);

/// Largest request accepted, bytes: the conversations of these tests are a
/// few KiB, a turn with 1,000 tool results about a MiB.
const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// Bytes of a synthetic stream written per chunk (the 50 MB answer): big
/// enough to send 50 MB in well under a second on loopback.
const SYNTHETIC_CHUNK_BYTES: usize = 64 * 1024;

/// What the proxy does to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// Pass the request and its answer through untouched.
    Forward,
    /// Answer this status with an OpenAI-style error body, without asking
    /// upstream.
    Status {
        status: u16,
        retry_after: Option<RetryAfter>,
    },
    /// Read the request, then reset the connection (RST) before any byte of
    /// an answer.
    ResetBeforeResponse,
    /// Forward, then reset the connection after this many events.
    ResetMidStream { after_events: usize },
    /// Forward, then send half of the next event after this many and end
    /// the HTTP body cleanly there: the event is cut, the transport is not.
    CutMidEvent { after_events: usize },
    /// Forward the answer one byte per `every`.
    SlowDrip { every: Duration },
    /// Forward, with an event of malformed JSON after the first one.
    MalformedDelta,
    /// Answer a 200 event stream of about this many bytes of text deltas,
    /// without asking upstream.
    Huge { bytes: usize },
}

/// The `Retry-After` header of a [`Fault::Status`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RetryAfter {
    /// `Retry-After: <seconds>`.
    Seconds(u64),
    /// `Retry-After: <HTTP-date>`, this long after the answer is sent.
    HttpDateIn(Duration),
}

/// One request the proxy received.
#[derive(Debug, Clone)]
pub struct Seen {
    /// When its head was read.
    pub at: Instant,
    /// Its path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Its body, as the client sent it.
    pub body: Vec<u8>,
}

struct Plan {
    first: std::collections::VecDeque<Fault>,
    then: Fault,
    seen: Vec<Seen>,
}

impl Plan {
    fn next(&mut self, path: String, body: Vec<u8>) -> Fault {
        self.seen.push(Seen {
            at: Instant::now(),
            path,
            body,
        });
        self.first.pop_front().unwrap_or_else(|| self.then.clone())
    }
}

/// A running proxy.
pub struct FaultProxy {
    addr: SocketAddr,
    plan: Arc<Mutex<Plan>>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl FaultProxy {
    /// Proxies to `upstream` (`None`: every fault of the plan must be one
    /// the proxy answers itself; a forward then fails with a 502), applying
    /// `first` to the first requests in order and `then` to all after.
    pub fn start(upstream: Option<SocketAddr>, first: Vec<Fault>, then: Fault) -> Self {
        let (runtime, listener, addr) = super::support::loopback_server();
        let plan = Arc::new(Mutex::new(Plan {
            first: first.into(),
            then,
            seen: Vec::new(),
        }));
        let shared = Arc::clone(&plan);
        let end = tokio::time::Instant::now() + PROXY_LIFETIME;
        runtime.spawn(async move {
            let _ = tokio::time::timeout_at(end, accept_all(listener, shared, upstream, end)).await;
        });
        Self {
            addr,
            plan,
            runtime: Some(runtime),
        }
    }

    /// `http://127.0.0.1:PORT/v1`, for `--base-url`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Seen> {
        self.plan.lock().unwrap().seen.clone()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        // Not a plain drop: that blocks, and panics inside an async context.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

async fn accept_all(
    listener: TcpListener,
    plan: Arc<Mutex<Plan>>,
    upstream: Option<SocketAddr>,
    end: tokio::time::Instant,
) {
    loop {
        let Ok((socket, _)) = listener.accept().await else {
            return;
        };
        let plan = Arc::clone(&plan);
        // Each connection is bounded by the proxy's lifetime too: a slow
        // drip must not outlive it.
        tokio::spawn(tokio::time::timeout_at(end, serve(socket, plan, upstream)));
    }
}

async fn serve(mut client: TcpStream, plan: Arc<Mutex<Plan>>, upstream: Option<SocketAddr>) {
    let Some(request) = read_request(&mut client).await else {
        return;
    };
    let fault = plan
        .lock()
        .unwrap()
        .next(request.path.clone(), request.body.clone());
    let _ = match (&fault, upstream) {
        (
            Fault::Status {
                status,
                retry_after,
            },
            _,
        ) => send_status(&mut client, *status, *retry_after).await,
        (Fault::ResetBeforeResponse, _) => reset(client),
        (Fault::Huge { bytes }, _) => send_huge(&mut client, *bytes).await,
        (_, None) => send_status(&mut client, 502, None).await,
        (_, Some(upstream)) => forward(client, upstream, &request, &fault).await,
    };
}

/// Closes with RST instead of FIN: the peer sees "connection reset".
fn reset(socket: TcpStream) -> std::io::Result<()> {
    socket.set_zero_linger()?;
    drop(socket);
    Ok(())
}

struct Request {
    head: String,
    path: String,
    body: Vec<u8>,
}

impl Request {
    /// The request as sent upstream: same method, path, headers and body,
    /// with the upstream's Host and `Connection: close`.
    fn to_upstream(&self, upstream: SocketAddr) -> Vec<u8> {
        let mut lines = self.head.split("\r\n").filter(|l| !l.is_empty());
        let mut out = format!("{}\r\n", lines.next().unwrap_or_default());
        for line in lines {
            let name = line.split(':').next().unwrap_or_default().trim();
            if ["host", "connection", "keep-alive"]
                .iter()
                .any(|h| name.eq_ignore_ascii_case(h))
            {
                continue;
            }
            out.push_str(line);
            out.push_str("\r\n");
        }
        out.push_str(&format!("host: {upstream}\r\nconnection: close\r\n\r\n"));
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

/// The request head and body; `None` for a malformed or oversized one.
async fn read_request(socket: &mut TcpStream) -> Option<Request> {
    let (head, mut body) = read_head(socket).await?;
    let path = head.split(' ').nth(1)?.to_owned();
    let length = header(&head, "content-length")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    if length > MAX_REQUEST_BYTES {
        return None;
    }
    let mut chunk = vec![0u8; 64 * 1024];
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Request { head, path, body })
}

/// Reads up to the blank line; returns the head and the bytes after it.
async fn read_head(socket: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end + 4]).into_owned();
            return Some((head, buf[end + 4..].to_vec()));
        }
        if buf.len() > MAX_REQUEST_BYTES {
            return None;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(n, _)| n.trim().eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
}

async fn send_status(
    socket: &mut TcpStream,
    status: u16,
    retry_after: Option<RetryAfter>,
) -> std::io::Result<()> {
    let kind = match status {
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "server_error",
    };
    let body = json!({"error": {
        "message": format!("injected HTTP {status} by the fault proxy"),
        "type": kind,
    }})
    .to_string();
    let retry_after = match retry_after {
        None => String::new(),
        Some(RetryAfter::Seconds(secs)) => format!("retry-after: {secs}\r\n"),
        Some(RetryAfter::HttpDateIn(wait)) => format!(
            "retry-after: {}\r\n",
            httpdate::fmt_http_date(SystemTime::now() + wait)
        ),
    };
    let head = format!(
        "HTTP/1.1 {status} Injected\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         {retry_after}connection: close\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(body.as_bytes()).await?;
    socket.shutdown().await
}

const STREAM_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
    cache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";

async fn write_chunk(socket: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    let mut framed = format!("{:x}\r\n", bytes.len()).into_bytes();
    framed.extend_from_slice(bytes);
    framed.extend_from_slice(b"\r\n");
    socket.write_all(&framed).await?;
    socket.flush().await
}

async fn end_chunks(socket: &mut TcpStream) -> std::io::Result<()> {
    socket.write_all(b"0\r\n\r\n").await?;
    socket.shutdown().await
}

/// About `bytes` of Chat Completions text deltas (1 KiB of text each), then
/// a proper end: a model that will not stop talking.
async fn send_huge(socket: &mut TcpStream, bytes: usize) -> std::io::Result<()> {
    socket.write_all(STREAM_HEAD).await?;
    let text = "All work and no play makes the model a dull model. ".repeat(20);
    let event = format!("data: {}\n\n", chat_chunk(json!({"content": text}), None));
    let mut sent = 0;
    let mut batch = Vec::with_capacity(SYNTHETIC_CHUNK_BYTES + event.len());
    while sent < bytes {
        batch.extend_from_slice(event.as_bytes());
        sent += event.len();
        if batch.len() >= SYNTHETIC_CHUNK_BYTES {
            write_chunk(socket, &batch).await?;
            batch.clear();
        }
    }
    batch.extend_from_slice(
        format!(
            "data: {}\n\ndata: [DONE]\n\n",
            chat_chunk(json!({}), Some("stop"))
        )
        .as_bytes(),
    );
    write_chunk(socket, &batch).await?;
    end_chunks(socket).await
}

/// One `chat.completion.chunk` with `delta` for choice 0.
pub fn chat_chunk(delta: serde_json::Value, finish_reason: Option<&str>) -> serde_json::Value {
    json!({
        "id": "chatcmpl-fault-proxy",
        "object": "chat.completion.chunk",
        "created": 1_744_112_711,
        "model": "fault-proxy",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    })
}

/// Sends `request` upstream and passes its answer back, damaged per
/// `fault`.
async fn forward(
    mut client: TcpStream,
    upstream: SocketAddr,
    request: &Request,
    fault: &Fault,
) -> std::io::Result<()> {
    let mut up = TcpStream::connect(upstream).await?;
    up.write_all(&request.to_upstream(upstream)).await?;
    let Some((head, first)) = read_head(&mut up).await else {
        return send_status(&mut client, 502, None).await;
    };
    let mut body = UpstreamBody::new(&head, first);
    // The status line and the headers that describe the content; framing is
    // the proxy's own (chunked, then close).
    let mut out = String::new();
    for line in head.split("\r\n").filter(|l| !l.is_empty()) {
        let name = line.split(':').next().unwrap_or_default().trim();
        let framing = [
            "transfer-encoding",
            "content-length",
            "connection",
            "keep-alive",
        ]
        .iter()
        .any(|h| name.eq_ignore_ascii_case(h));
        if !framing {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    out.push_str("transfer-encoding: chunked\r\nconnection: close\r\n\r\n");
    client.write_all(out.as_bytes()).await?;

    let mut events = EventSplitter::default();
    let mut sent = 0;
    while let Some(bytes) = body.next(&mut up).await? {
        for event in events.push(&bytes) {
            match fault {
                Fault::ResetMidStream { after_events } if sent == *after_events => {
                    return reset(client);
                }
                Fault::CutMidEvent { after_events } if sent == *after_events => {
                    write_chunk(&mut client, &event[..event.len() / 2]).await?;
                    return end_chunks(&mut client).await;
                }
                Fault::MalformedDelta if sent == 1 => {
                    write_chunk(
                        &mut client,
                        b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"cut\n\n",
                    )
                    .await?;
                    write_chunk(&mut client, &event).await?;
                }
                Fault::SlowDrip { every } => {
                    for byte in event.iter() {
                        write_chunk(&mut client, std::slice::from_ref(byte)).await?;
                        tokio::time::sleep(*every).await;
                    }
                }
                _ => write_chunk(&mut client, &event).await?,
            }
            sent += 1;
        }
    }
    write_chunk(&mut client, &events.rest()).await?;
    end_chunks(&mut client).await
}

/// The body of the upstream's answer, de-chunked when it was chunked.
struct UpstreamBody {
    chunked: Option<Dechunker>,
    remaining: Option<usize>,
    pending: Vec<u8>,
    done: bool,
}

impl UpstreamBody {
    fn new(head: &str, first: Vec<u8>) -> Self {
        let chunked = header(head, "transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
        Self {
            chunked: chunked.then(Dechunker::default),
            remaining: header(head, "content-length").and_then(|v| v.parse().ok()),
            pending: first,
            done: false,
        }
    }

    /// The next decoded bytes; `None` at the end of the body.
    async fn next(&mut self, up: &mut TcpStream) -> std::io::Result<Option<Vec<u8>>> {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            if self.done {
                return Ok(None);
            }
            let raw = if self.pending.is_empty() {
                let n = up.read(&mut buf).await?;
                if n == 0 {
                    self.done = true;
                    return Ok(None);
                }
                buf[..n].to_vec()
            } else {
                std::mem::take(&mut self.pending)
            };
            let decoded = match &mut self.chunked {
                Some(dechunker) => {
                    let out = dechunker.push(&raw);
                    self.done = dechunker.finished;
                    out
                }
                None => match &mut self.remaining {
                    Some(left) => {
                        let take = raw.len().min(*left);
                        *left -= take;
                        self.done = *left == 0;
                        raw[..take].to_vec()
                    }
                    None => raw,
                },
            };
            if !decoded.is_empty() {
                return Ok(Some(decoded));
            }
        }
    }
}

/// Incremental `transfer-encoding: chunked` decoder.
#[derive(Default)]
struct Dechunker {
    buf: Vec<u8>,
    /// Bytes left of the current chunk's data, then its CRLF.
    in_chunk: Option<usize>,
    finished: bool,
}

impl Dechunker {
    fn push(&mut self, bytes: &[u8]) -> Vec<u8> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        loop {
            match self.in_chunk {
                None => {
                    let Some(eol) = self.buf.windows(2).position(|w| w == b"\r\n") else {
                        return out;
                    };
                    let line = String::from_utf8_lossy(&self.buf[..eol]).into_owned();
                    self.buf.drain(..eol + 2);
                    let size = line.split(';').next().unwrap_or_default().trim();
                    let size = usize::from_str_radix(size, 16).unwrap_or(0);
                    if size == 0 {
                        self.finished = true;
                        return out;
                    }
                    self.in_chunk = Some(size);
                }
                Some(left) => {
                    // The data, then its CRLF, must be complete to move on.
                    if self.buf.len() < left + 2 {
                        let take = self.buf.len().min(left);
                        out.extend(self.buf.drain(..take));
                        self.in_chunk = Some(left - take);
                        return out;
                    }
                    out.extend(self.buf.drain(..left));
                    self.buf.drain(..2);
                    self.in_chunk = None;
                }
            }
        }
    }
}

/// Splits a byte stream into SSE events (each ending in a blank line).
#[derive(Default)]
struct EventSplitter {
    buf: Vec<u8>,
}

impl EventSplitter {
    fn push(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
        self.buf.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(end) = self.buf.windows(2).position(|w| w == b"\n\n") {
            events.push(self.buf.drain(..end + 2).collect());
        }
        events
    }

    /// What follows the last complete event.
    fn rest(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }
}
