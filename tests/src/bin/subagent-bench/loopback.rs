//! A loopback OpenAI Chat Completions server for the benchmarks: every
//! POST gets one short streamed text turn; every request body is kept (so
//! a comparison can replay exactly what the worker sent). A thread per
//! connection; it stops when dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

/// One streamed text turn in the OpenAI Chat dialect.
pub const TURN: &str = concat!(
    "data: {\"id\":\"b\",\"object\":\"chat.completion.chunk\",\"model\":\"bench\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hello from the loopback model.\"},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"b\",\"object\":\"chat.completion.chunk\",\"model\":\"bench\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":6,\"total_tokens\":18}}\n\n",
    "data: [DONE]\n\n"
);

pub struct Loopback {
    pub port: u16,
    bodies: Arc<Mutex<Vec<Vec<u8>>>>,
    gate: Arc<Gate>,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

/// Holds every answer until released (a slow model whose every caller is
/// live at once, without sleeping), and counts the requests that arrived.
#[derive(Default)]
struct Gate {
    state: Mutex<GateState>,
    changed: Condvar,
}

#[derive(Default)]
struct GateState {
    arrived: usize,
    open: bool,
}

impl Gate {
    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Loopback {
    /// Answers at once.
    pub fn start() -> std::io::Result<Self> {
        Self::serve(true)
    }

    /// Holds every answer until [`Self::release`].
    pub fn start_held() -> std::io::Result<Self> {
        Self::serve(false)
    }

    fn serve(open: bool) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let gate = Arc::new(Gate::default());
        gate.lock().open = open;
        let stop = Arc::new(AtomicBool::new(false));
        let acceptor = {
            let (bodies, stop, gate) = (Arc::clone(&bodies), Arc::clone(&stop), Arc::clone(&gate));
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(stream) = stream else { continue };
                    let bodies = Arc::clone(&bodies);
                    let gate = Arc::clone(&gate);
                    let _ = std::thread::Builder::new()
                        .stack_size(64 * 1024)
                        .spawn(move || {
                            if let Ok(body) = answer(stream, &gate) {
                                bodies
                                    .lock()
                                    .unwrap_or_else(PoisonError::into_inner)
                                    .push(body);
                            }
                        });
                }
            })
        };
        Ok(Self {
            port,
            bodies,
            gate,
            stop,
            acceptor: Some(acceptor),
        })
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// A one-line task for the real worker against this model, run in
    /// `workspace`.
    pub fn request(&self, workspace: &std::path::Path) -> subagent_supervisor::RunRequest {
        let provider = subagent_protocol::ProviderSpec {
            kind: subagent_protocol::ProviderKind::OpenaiChat,
            base_url: self.base_url(),
            model: "bench".into(),
            api_key: None,
            temperature: None,
            max_tokens: None,
            reasoning: false,
            price: None,
        };
        let mut request = subagent_supervisor::RunRequest::new("general", "Say hello.", provider);
        request.workspace_dir = workspace.to_owned();
        request
    }

    /// Lets every held answer go, and every later one.
    pub fn release(&self) {
        self.gate.lock().open = true;
        self.gate.changed.notify_all();
    }

    /// Waits until `n` requests have arrived (or `timeout` passed); true
    /// when they did.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        let mut state = self.gate.lock();
        while state.arrived < n {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return false;
            }
            state = self
                .gate
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }

    /// The request bodies received so far, oldest first.
    pub fn bodies(&self) -> Vec<Vec<u8>> {
        self.bodies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Loopback {
    /// Writes the first request body received to `path`, for curl to replay.
    pub fn save_first_body(&self, path: &std::path::Path) -> anyhow::Result<()> {
        let body = self
            .bodies()
            .into_iter()
            .next()
            .ok_or_else(|| anyhow::anyhow!("the loopback server recorded no request"))?;
        std::fs::write(path, body)?;
        Ok(())
    }
}

impl Drop for Loopback {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.release();
        // Wakes the acceptor so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// Reads one request, answers it with [`TURN`], returns its body.
fn answer(stream: TcpStream, gate: &Gate) -> std::io::Result<Vec<u8>> {
    stream.set_read_timeout(Some(Duration::from_secs(120)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    {
        let mut state = gate.lock();
        state.arrived += 1;
        gate.changed.notify_all();
        while !state.open {
            state = gate
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{TURN}",
        TURN.len()
    )?;
    stream.flush()?;
    Ok(body)
}
