//! The loopback HTTP stub the tests share: one request reader (heads
//! parsed by `httparse`, bodies by `content-length`, both capped), for
//! blocking and tokio sockets, and [`LoopbackHttp`], a server on
//! 127.0.0.1 that records every request and answers each with what the
//! test's function returns. Tests that need malformed bytes on the wire
//! (the fault proxy) keep raw sockets; everything else uses this.
//!
//! The stub stops when dropped: nothing it started outlives the test.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tokio::io::{AsyncRead, AsyncReadExt};

/// Largest request read, head and body: far above any request of the
/// tests (a whole conversation with capped tool results).
pub const MAX_REQUEST_BYTES: usize = 8 * 1024 * 1024;

/// Most headers a request may have.
const MAX_HEADERS: usize = 64;

/// One request as the stub read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The request target (path and query).
    pub target: String,
    /// The HTTP minor version (`1` for HTTP/1.1).
    pub version: u8,
    /// Headers in order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body (`content-length` bytes).
    pub body: Vec<u8>,
}

impl Request {
    /// The request line and headers as sent (`METHOD TARGET HTTP/1.x`,
    /// then `name: value` lines), for a failure message or a text search.
    pub fn head(&self) -> String {
        let mut head = format!(
            "{} {} HTTP/1.{}\r\n",
            self.method, self.target, self.version
        );
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head
    }

    /// The whole request as text: [`Self::head`], a blank line, the body
    /// (lossy UTF-8).
    pub fn text(&self) -> String {
        format!("{}\r\n{}", self.head(), String::from_utf8_lossy(&self.body))
    }

    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What the stub answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// `content-type`.
    pub content_type: String,
    /// More headers (`location`, ...).
    pub headers: Vec<(String, String)>,
    /// The body, sent with its `content-length`.
    pub body: Vec<u8>,
}

impl Response {
    /// `status` with `body` of `content_type`.
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            content_type: content_type.to_owned(),
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// The same response with header `name: value` too.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// `status` with a JSON `body`.
    pub fn json(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Self::new(status, "application/json", body)
    }

    /// The response's bytes, `connection: close`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut head = format!(
            "HTTP/1.1 {} Stub\r\ncontent-type: {}\r\ncontent-length: {}\r\nconnection: close\r\n",
            self.status,
            self.content_type,
            self.body.len()
        );
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

/// A head parsed out of the bytes read so far.
enum Head {
    /// More bytes are needed.
    Partial,
    /// Not HTTP, or over a cap.
    Invalid,
    /// The request line and headers, and where the body starts.
    Complete {
        method: String,
        target: String,
        version: u8,
        headers: Vec<(String, String)>,
        length: Option<usize>,
        body_start: usize,
    },
}

fn parse_head(buf: &[u8]) -> Head {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(buf) {
        Ok(httparse::Status::Partial) if buf.len() < MAX_REQUEST_BYTES => Head::Partial,
        Ok(httparse::Status::Complete(body_start)) => {
            let headers: Vec<(String, String)> = request
                .headers
                .iter()
                .map(|h| {
                    (
                        h.name.to_owned(),
                        String::from_utf8_lossy(h.value).into_owned(),
                    )
                })
                .collect();
            let length = headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
                .map(|(_, v)| v.trim().parse::<usize>());
            match length {
                Some(Err(_)) => Head::Invalid,
                Some(Ok(n)) if n > MAX_REQUEST_BYTES => Head::Invalid,
                length => Head::Complete {
                    method: request.method.unwrap_or_default().to_owned(),
                    target: request.path.unwrap_or_default().to_owned(),
                    version: request.version.unwrap_or(1),
                    headers,
                    length: length.and_then(Result::ok),
                    body_start,
                },
            }
        }
        _ => Head::Invalid,
    }
}

/// Reads one request from a blocking stream; `None` when it is malformed,
/// over [`MAX_REQUEST_BYTES`], ends early, or (with `require_length`) has
/// no `content-length`.
pub fn read_request(stream: &mut impl Read, require_length: bool) -> Option<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(done) = request_in(&buf, require_length) {
            return done;
        }
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// [`read_request`] for a tokio stream.
pub async fn read_request_async(
    stream: &mut (impl AsyncRead + Unpin),
    require_length: bool,
) -> Option<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(done) = request_in(&buf, require_length) {
            return done;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The request `buf` holds: `None` while more bytes are needed,
/// `Some(None)` when it never will be one.
fn request_in(buf: &[u8], require_length: bool) -> Option<Option<Request>> {
    match parse_head(buf) {
        Head::Partial => None,
        Head::Invalid => Some(None),
        Head::Complete {
            method,
            target,
            version,
            headers,
            length,
            body_start,
        } => {
            if length.is_none() && require_length {
                return Some(None);
            }
            let length = length.unwrap_or(0);
            let body = buf.get(body_start..)?;
            if body.len() < length {
                return None;
            }
            Some(Some(Request {
                method,
                target,
                version,
                headers,
                body: body[..length].to_vec(),
            }))
        }
    }
}

/// A loopback HTTP server on 127.0.0.1: every request recorded, each
/// answered with what `answer` returns (one connection at a time,
/// `connection: close`); stopped and joined when dropped.
pub struct LoopbackHttp {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl LoopbackHttp {
    /// Starts the server.
    ///
    /// # Panics
    /// When no loopback port can be bound.
    pub fn start(answer: impl Fn(&Request) -> Response + Send + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .unwrap_or_else(|e| panic!("cannot bind a loopback port: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("the listener has no address: {e}"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (keep, stopping) = (Arc::clone(&seen), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(mut stream) = stream else { continue };
                serve_one(&mut stream, &keep, &answer);
            }
        });
        Self {
            addr,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

fn serve_one(
    stream: &mut TcpStream,
    seen: &Mutex<Vec<Request>>,
    answer: &impl Fn(&Request) -> Response,
) {
    // A client that connects and sends nothing must not hold the stub
    // (and the test dropping it) forever.
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(30)));
    let Some(request) = read_request(stream, false) else {
        return;
    };
    let response = answer(&request);
    if let Ok(mut seen) = seen.lock() {
        seen.push(request);
    }
    let _ = stream.write_all(&response.to_bytes());
    let _ = stream.flush();
}

impl Drop for LoopbackHttp {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop, which then sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
