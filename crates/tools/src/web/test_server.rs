//! A loopback HTTP/1.1 server for the web tools' tests: each connection
//! gets one reply chosen by the request's path, and every request is
//! recorded so a test can prove that a refused fetch sent nothing. Requests
//! are read by the workspace's one reader (`subagent_test_support::http`);
//! this server stays apart from its `LoopbackHttp` for the faulty replies
//! (endless bodies, silence) and the concurrent connections these tests
//! need.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use subagent_test_support::http::read_request_async;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// What the server answers.
pub(crate) enum Reply {
    /// A complete response.
    Page {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Headers, then body bytes until the client goes away.
    Endless { content_type: String },
    /// Nothing at all, until the client goes away.
    Silent,
}

impl Reply {
    pub(crate) fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Reply::Page {
            status: 200,
            headers: vec![("Content-Type".to_owned(), content_type.to_owned())],
            body: body.into(),
        }
    }

    pub(crate) fn redirect(location: &str) -> Self {
        Reply::Page {
            status: 302,
            headers: vec![("Location".to_owned(), location.to_owned())],
            body: Vec::new(),
        }
    }
}

/// One request as it arrived.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    /// Path and query.
    pub(crate) target: String,
    /// Header names lowercased.
    pub(crate) headers: Vec<(String, String)>,
}

impl Recorded {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

type Route = dyn Fn(&str) -> Reply + Send + Sync;

pub(crate) struct TestServer {
    pub(crate) addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    accept: JoinHandle<()>,
}

impl TestServer {
    /// Serves on 127.0.0.1, replying to each request with `route(target)`.
    pub(crate) async fn start(route: impl Fn(&str) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let route: Arc<Route> = Arc::new(route);
        let recorded = Arc::clone(&requests);
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let route = Arc::clone(&route);
                let recorded = Arc::clone(&recorded);
                tokio::spawn(serve(stream, route, recorded));
            }
        });
        Self {
            addr,
            requests,
            accept,
        }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn serve(mut stream: TcpStream, route: Arc<Route>, recorded: Arc<Mutex<Vec<Recorded>>>) {
    // The workspace's one request reader; the replies below stay raw, as
    // some of them (endless, silent) are faults no well-formed stub sends.
    let Some(request) = read_request_async(&mut stream, false).await else {
        return;
    };
    let target = request.target;
    let headers = request
        .headers
        .into_iter()
        .map(|(n, v)| (n.to_ascii_lowercase(), v))
        .collect();
    recorded.lock().unwrap().push(Recorded {
        target: target.clone(),
        headers,
    });
    match route(&target) {
        Reply::Page {
            status,
            headers,
            body,
        } => {
            let mut out = format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\n", body.len());
            for (name, value) in headers {
                out.push_str(&format!("{name}: {value}\r\n"));
            }
            out.push_str("Connection: close\r\n\r\n");
            let _ = stream.write_all(out.as_bytes()).await;
            let _ = stream.write_all(&body).await;
        }
        Reply::Endless { content_type } => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n"
            );
            let _ = stream.write_all(head.as_bytes()).await;
            let chunk = vec![b'a'; 64 * 1024];
            while stream.write_all(&chunk).await.is_ok() {}
        }
        Reply::Silent => {
            // Hold the connection open until the client drops it.
            let mut buf = [0u8; 4096];
            while matches!(stream.read(&mut buf).await, Ok(n) if n > 0) {}
        }
    }
}
