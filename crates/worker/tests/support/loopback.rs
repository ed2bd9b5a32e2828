//! A scripted HTTP/1.1 server on 127.0.0.1 that plays recorded provider
//! answers, one [`Reply`] per request in order, and records every request
//! (headers, body, arrival time) for the test to assert on.
//!
//! Streams go out chunk-encoded, cut at random byte boundaries with a flush
//! between pieces, the way a real provider's bytes arrive. The server binds
//! port 0, serves only loopback, and stops by itself: when dropped, and in
//! any case after [`SERVER_LIFETIME`].

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// Longest a server lives, in seconds: far beyond any test of this suite,
/// short enough that a hung test cannot keep a port open for long.
pub const SERVER_LIFETIME: Duration = Duration::from_secs(30);

/// Longest a stalled reply waits for the client to hang up, in seconds.
const STALL_LIMIT: Duration = Duration::from_secs(10);

/// Largest random piece of a stream, in bytes.
const MAX_PIECE: usize = 97;

/// What the server answers to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// 200 `text/event-stream`, the body in random pieces, then a clean end.
    Stream(Vec<u8>),
    /// 200 `text/event-stream`: `body`, then the connection is dropped
    /// without ending the chunked body.
    CutAfter(Vec<u8>),
    /// 200 `text/event-stream`: `body`, then silence until the client
    /// hangs up.
    Stall(Vec<u8>),
    /// No answer at all (not even headers) until the client hangs up.
    Silent,
    /// 200 `text/event-stream`: each piece after waiting `gap`.
    Drip {
        /// The pieces, sent in order.
        pieces: Vec<Vec<u8>>,
        /// Wait before each piece.
        gap: Duration,
    },
    /// A complete answer with this status, extra headers and body.
    Status {
        /// HTTP status.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// Body (sent as `application/json`).
        body: String,
    },
}

impl Reply {
    /// A JSON error answer.
    pub fn status(status: u16, body: &str) -> Self {
        Reply::Status {
            status,
            headers: Vec::new(),
            body: body.to_owned(),
        }
    }
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Request method.
    pub method: String,
    /// Request path.
    pub path: String,
    /// Headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// When the whole request had arrived.
    pub at: Instant,
}

impl Recorded {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Default)]
struct Script {
    replies: VecDeque<Reply>,
    requests: Vec<Recorded>,
}

/// A running scripted server.
pub struct Loopback {
    addr: SocketAddr,
    script: Arc<Mutex<Script>>,
    task: JoinHandle<()>,
}

impl Loopback {
    /// Starts a server that answers with `replies`, in order.
    pub async fn start(replies: Vec<Reply>) -> Loopback {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let script = Arc::new(Mutex::new(Script {
            replies: replies.into(),
            requests: Vec::new(),
        }));
        let seed: u64 = rand::random();
        // Printed so a failure caused by one particular cut can be replayed.
        eprintln!("loopback server on {addr}, piece seed {seed}");
        let task = tokio::spawn(serve(listener, Arc::clone(&script), seed));
        Loopback { addr, script, task }
    }

    /// The base URL a provider spec points at (`http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.script.lock().expect("script lock").requests.clone()
    }

    /// Replies not yet used.
    pub fn replies_left(&self) -> usize {
        self.script.lock().expect("script lock").replies.len()
    }
}

impl Drop for Loopback {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(listener: TcpListener, script: Arc<Mutex<Script>>, seed: u64) {
    let mut connections = JoinSet::new();
    let mut rng = StdRng::seed_from_u64(seed);
    let accept_all = async {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let piece_seed = rng.random();
            connections.spawn(answer(socket, Arc::clone(&script), piece_seed));
        }
    };
    // Dropping the JoinSet at the end aborts connections still open.
    let _ = tokio::time::timeout(SERVER_LIFETIME, accept_all).await;
}

async fn answer(mut socket: TcpStream, script: Arc<Mutex<Script>>, seed: u64) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    let reply = {
        let mut script = script.lock().expect("script lock");
        script.requests.push(request);
        script.replies.pop_front()
    };
    let reply = reply.unwrap_or_else(|| {
        // 400 so that a provider does not retry into an empty script.
        Reply::status(
            400,
            r#"{"error":{"message":"loopback: no scripted reply left","type":"test_script"}}"#,
        )
    });
    let mut rng = StdRng::seed_from_u64(seed);
    let _ = send_reply(&mut socket, reply, &mut rng).await;
}

async fn send_reply(socket: &mut TcpStream, reply: Reply, rng: &mut StdRng) -> std::io::Result<()> {
    const STREAM_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n\
         cache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
    match reply {
        Reply::Status {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} Scripted\r\ncontent-type: application/json\r\n\
                 content-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            socket.write_all(head.as_bytes()).await?;
            socket.write_all(body.as_bytes()).await?;
            socket.flush().await
        }
        Reply::Stream(body) => {
            socket.write_all(STREAM_HEAD.as_bytes()).await?;
            send_in_random_pieces(socket, &body, rng).await?;
            socket.write_all(b"0\r\n\r\n").await?;
            socket.flush().await
        }
        Reply::CutAfter(body) => {
            socket.write_all(STREAM_HEAD.as_bytes()).await?;
            send_in_random_pieces(socket, &body, rng).await?;
            socket.shutdown().await
        }
        Reply::Stall(body) => {
            socket.write_all(STREAM_HEAD.as_bytes()).await?;
            send_in_random_pieces(socket, &body, rng).await?;
            wait_for_hang_up(socket).await;
            Ok(())
        }
        Reply::Silent => {
            wait_for_hang_up(socket).await;
            Ok(())
        }
        Reply::Drip { pieces, gap } => {
            socket.write_all(STREAM_HEAD.as_bytes()).await?;
            socket.flush().await?;
            for piece in pieces {
                tokio::time::sleep(gap).await;
                write_chunk(socket, &piece).await?;
            }
            socket.write_all(b"0\r\n\r\n").await?;
            socket.flush().await
        }
    }
}

async fn send_in_random_pieces(
    socket: &mut TcpStream,
    body: &[u8],
    rng: &mut StdRng,
) -> std::io::Result<()> {
    let mut rest = body;
    while !rest.is_empty() {
        let take = rng.random_range(1..=MAX_PIECE).min(rest.len());
        write_chunk(socket, &rest[..take]).await?;
        rest = &rest[take..];
        tokio::task::yield_now().await;
    }
    Ok(())
}

async fn write_chunk(socket: &mut TcpStream, piece: &[u8]) -> std::io::Result<()> {
    socket
        .write_all(format!("{:x}\r\n", piece.len()).as_bytes())
        .await?;
    socket.write_all(piece).await?;
    socket.write_all(b"\r\n").await?;
    socket.flush().await
}

/// Returns when the client closed its side (or after [`STALL_LIMIT`]).
async fn wait_for_hang_up(socket: &mut TcpStream) {
    let mut buf = [0u8; 256];
    let _ = tokio::time::timeout(STALL_LIMIT, async {
        while let Ok(n) = socket.read(&mut buf).await {
            if n == 0 {
                return;
            }
        }
    })
    .await;
}

async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Recorded {
        method,
        path,
        headers,
        body,
        at: Instant::now(),
    })
}
