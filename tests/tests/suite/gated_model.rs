//! A gated OpenAI Responses API model on 127.0.0.1 for tests that must catch
//! a batch in a chosen state: every task's turn waits at a gate the test
//! opens, and a task can be kept waiting on its own (the one a job engine
//! is about to requeue) while the others finish.
//!
//! A request names its task by the first `task-id=ID` in its body (the task
//! text carries it); the answer is [`answer_for`] that id, streamed as the
//! Responses API streams. Every request is counted per id on arrival, so a
//! test can wait for a task's turn to be in flight and prove which tasks
//! ran twice. The gate starts closed. The server stops by itself when
//! dropped and in any case after [`SERVER_LIFETIME`]; it never answers
//! anything but `POST .../responses`.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::scripted_model::{read_request, send_status, send_stream};

/// Longest the server lives: beyond the Slurm test's own deadline, short
/// enough that a hung test frees the port soon.
pub const SERVER_LIFETIME: Duration = Duration::from_secs(300);

/// What a waiting turn may do.
#[derive(Default, Clone)]
struct Gate {
    /// Turns may be answered (except the held ids').
    open: bool,
    /// Ids whose turns wait even with the gate open.
    held: BTreeSet<String>,
}

impl Gate {
    fn lets_through(&self, id: &str) -> bool {
        self.open && !self.held.contains(id)
    }
}

/// A running gated model.
pub struct GatedModel {
    addr: SocketAddr,
    gate: watch::Sender<Gate>,
    /// Requests received, per task id.
    requests: Arc<(Mutex<BTreeMap<String, usize>>, Condvar)>,
    runtime: Option<tokio::runtime::Runtime>,
}

/// The answer to the task carrying `task-id=ID`.
pub fn answer_for(id: &str) -> String {
    format!("finished task {id}")
}

impl GatedModel {
    /// Starts with the gate closed: turns wait until [`Self::open_except`].
    pub fn start() -> Self {
        let (runtime, listener, addr) = super::support::loopback_server();
        let (gate, _) = watch::channel(Gate::default());
        let requests = Arc::new((Mutex::new(BTreeMap::new()), Condvar::new()));
        let (watch, counts) = (gate.clone(), Arc::clone(&requests));
        runtime.spawn(async move {
            let _ =
                tokio::time::timeout(SERVER_LIFETIME, accept_all(listener, watch, counts)).await;
        });
        Self {
            addr,
            gate,
            requests,
            runtime: Some(runtime),
        }
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Opens the gate for every task but `held`, whose turns keep waiting.
    pub fn open_except(&self, held: &[&str]) {
        self.gate.send_modify(|g| {
            g.open = true;
            g.held = held.iter().map(|id| (*id).to_owned()).collect();
        });
    }

    /// Lets `id`'s turns through too.
    pub fn release(&self, id: &str) {
        self.gate.send_modify(|g| {
            g.held.remove(id);
        });
    }

    /// Requests received so far, per task id.
    pub fn requests(&self) -> BTreeMap<String, usize> {
        self.requests.0.lock().unwrap().clone()
    }

    /// Waits until `id` has had at least `n` requests; false when `timeout`
    /// passed first.
    pub fn wait_for_requests(&self, id: &str, n: usize, timeout: Duration) -> bool {
        let (counts, arrived) = &*self.requests;
        let counts = counts.lock().unwrap();
        let (counts, _) = arrived
            .wait_timeout_while(counts, timeout, |c| c.get(id).copied().unwrap_or(0) < n)
            .unwrap();
        counts.get(id).copied().unwrap_or(0) >= n
    }
}

impl Drop for GatedModel {
    fn drop(&mut self) {
        // Not a plain drop: that blocks, and panics inside an async context.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

type Counts = Arc<(Mutex<BTreeMap<String, usize>>, Condvar)>;

async fn accept_all(listener: TcpListener, gate: watch::Sender<Gate>, counts: Counts) {
    loop {
        let Ok((socket, _)) = listener.accept().await else {
            return;
        };
        tokio::spawn(answer(socket, gate.subscribe(), Arc::clone(&counts)));
    }
}

async fn answer(mut socket: TcpStream, mut gate: watch::Receiver<Gate>, counts: Counts) {
    let Some((path, body)) = read_request(&mut socket).await else {
        return;
    };
    let id = task_id(&String::from_utf8_lossy(&body));
    let (Some(id), true) = (id, path.ends_with("/responses")) else {
        let _ = send_status(&mut socket, 400, "gated model: not a task's Responses turn").await;
        return;
    };
    {
        let (counts, arrived) = &*counts;
        *counts.lock().unwrap().entry(id.clone()).or_insert(0) += 1;
        arrived.notify_all();
    }
    if gate.wait_for(|g| g.lets_through(&id)).await.is_err() {
        return;
    }
    // Its answers hold no pause marker, so the semaphore is never waited on.
    let no_pauses = tokio::sync::Semaphore::new(0);
    let _ = send_stream(&mut socket, &text_response(&answer_for(&id)), &no_pauses).await;
}

/// The id after the first `task-id=` in `body`: letters, digits, `-`, `_`.
fn task_id(body: &str) -> Option<String> {
    let rest = &body[body.find("task-id=")? + "task-id=".len()..];
    let id: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    (!id.is_empty()).then_some(id)
}

/// A Responses API stream answering `text`: created, one delta per word,
/// completed with usage.
fn text_response(text: &str) -> Vec<u8> {
    let response = |status: &str, usage: Value| {
        json!({"id": "resp_gated", "object": "response", "status": status,
               "model": "gated", "output": [], "usage": usage})
    };
    let mut events = vec![json!({"type": "response.created",
                                 "response": response("in_progress", Value::Null)})];
    for word in text.split_inclusive(' ') {
        events.push(
            json!({"type": "response.output_text.delta", "output_index": 0,
                           "content_index": 0, "delta": word}),
        );
    }
    events.push(
        json!({"type": "response.completed", "response": response("completed",
        json!({"input_tokens": 20, "output_tokens": 5, "total_tokens": 25}))}),
    );
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
        .collect::<String>()
        .into_bytes()
}
