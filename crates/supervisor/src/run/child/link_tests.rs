use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use subagent_protocol::frame::{MaxPayload, encode_frame};
use subagent_protocol::{FromWorker, WorkerEvent};
use tokio::io::{AsyncRead, ReadBuf};

use super::*;

/// A worker that never stops sending: the same frame forever, as fast as it
/// is read. Counts the bytes it handed out.
struct Flood {
    frame: Vec<u8>,
    at: usize,
    served: Arc<AtomicU64>,
}

impl Flood {
    fn of_text_deltas(bytes: usize) -> (Self, Arc<AtomicU64>) {
        let message = FromWorker::Event(WorkerEvent::TextDelta {
            text: "y".repeat(bytes),
        });
        let served = Arc::new(AtomicU64::new(0));
        let flood = Self {
            frame: encode_frame(&message, MaxPayload::default()).unwrap(),
            at: 0,
            served: Arc::clone(&served),
        };
        (flood, served)
    }
}

impl AsyncRead for Flood {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let n = buf.remaining().min(self.frame.len() - self.at);
        let at = self.at;
        buf.put_slice(&self.frame[at..at + n]);
        self.at = (at + n) % self.frame.len();
        self.served.fetch_add(n as u64, Ordering::Relaxed);
        Poll::Ready(Ok(()))
    }
}

/// Held by every test here: the frame budget and the small-frame reserve
/// are the process's, and `cargo test` runs these tests side by side in one
/// (nextest gives each a process of its own).
static POOLS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Lets every other task run until all of them wait (the clock is paused,
/// so it only moves once nothing else can).
async fn settle() {
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn nothing_past_the_protocol_cap_is_read() {
    let _pools = POOLS.lock().await;
    let cap = 1 << 20;
    let (flood, served) = Flood::of_text_deltas(60 * 1024);
    let (_link, mut inbox) = Link::start(flood, tokio::io::sink(), cap);
    let mut messages = 0;
    let last = loop {
        match inbox.recv().await.unwrap() {
            Inbound::Message { .. } => messages += 1,
            other => break other,
        }
    };
    assert!(matches!(last, Inbound::Flood), "{last:?}");
    assert!(messages > 0);
    // The byte past the cap proves the flood; not one more is read.
    assert_eq!(served.load(Ordering::Relaxed), cap + 1);
}

#[tokio::test]
async fn a_worker_that_sends_exactly_the_cap_is_not_a_flood() {
    let _pools = POOLS.lock().await;
    let (flood, _) = Flood::of_text_deltas(1000);
    let frame = flood.frame.clone();
    let cap = 3 * frame.len() as u64;
    let stream = std::io::Cursor::new(frame.repeat(3));
    let (_link, mut inbox) = Link::start(stream, tokio::io::sink(), cap);
    for _ in 0..3 {
        assert!(matches!(
            inbox.recv().await.unwrap(),
            Inbound::Message { .. }
        ));
    }
    assert!(matches!(inbox.recv().await.unwrap(), Inbound::Eof));
}

#[tokio::test(start_paused = true)]
async fn frames_waiting_to_be_handled_are_bounded_by_their_bytes() {
    let _pools = POOLS.lock().await;
    // Small frames: a link may queue many of them.
    let frame_bytes = SMALL_FRAME_MAX / 2;
    let (flood, served) = Flood::of_text_deltas(frame_bytes);
    let (_link, mut inbox) = Link::start(flood, tokio::io::sink(), u64::MAX);
    settle().await;
    // The queue's worth, the frame waiting for room, and one frame's read.
    let bound = u64::from(QUEUED_BYTES) + 2 * (frame_bytes as u64 + 64);
    let stalled_at = served.load(Ordering::Relaxed);
    assert!(
        stalled_at <= bound,
        "{stalled_at} bytes read, bound {bound}"
    );

    // Handling one frame makes room for about one more.
    let Some(Inbound::Message { held, .. }) = inbox.recv().await else {
        panic!("a message")
    };
    drop(held);
    settle().await;
    let resumed_at = served.load(Ordering::Relaxed);
    assert!(resumed_at > stalled_at, "the reader resumed");
    assert!(
        resumed_at <= bound,
        "{resumed_at} bytes read, bound {bound}"
    );
}

#[tokio::test(start_paused = true)]
async fn small_frames_of_all_links_together_stay_within_the_reserve() {
    let _pools = POOLS.lock().await;
    // Five links whose frames nobody handles: each link's own queue would
    // take 16 MiB of them, 80 MiB in all, past the 64 MiB reserve. (The
    // reserve is the process's: see `POOLS`.)
    const LINKS: usize = 5;
    let frame_bytes = SMALL_FRAME_MAX / 2;
    let mut links = Vec::new();
    let mut served = Vec::new();
    for _ in 0..LINKS {
        let (flood, count) = Flood::of_text_deltas(frame_bytes);
        links.push(Link::start(flood, tokio::io::sink(), u64::MAX));
        served.push(count);
    }
    settle().await;
    let total: u64 = served.iter().map(|s| s.load(Ordering::Relaxed)).sum();
    // The reserve, and on each link a frame read and waiting for it and
    // the next one being read.
    let bound = u64::from(SMALL_FRAME_RESERVE_BYTES) + LINKS as u64 * 2 * (frame_bytes as u64 + 64);
    assert!(total <= bound, "{total} bytes read, bound {bound}");
    assert!(
        total > u64::from(SMALL_FRAME_RESERVE_BYTES) / 2,
        "{total} bytes read: the links did read"
    );
}

#[tokio::test(start_paused = true)]
async fn a_link_reads_no_large_frame_while_its_last_one_is_unhandled() {
    let _pools = POOLS.lock().await;
    // Eight of these fit in the link's queue; only one is read at a time.
    let frame_bytes = 2 * SMALL_FRAME_MAX;
    let (flood, served) = Flood::of_text_deltas(frame_bytes);
    let (_link, mut inbox) = Link::start(flood, tokio::io::sink(), u64::MAX);
    let Some(Inbound::Message { held, .. }) = inbox.recv().await else {
        panic!("a message")
    };
    settle().await;
    // The frame held, and the next one's header and a read's worth of it.
    let bound = 2 * (frame_bytes as u64 + 64);
    let stalled_at = served.load(Ordering::Relaxed);
    assert!(
        stalled_at <= bound,
        "{stalled_at} bytes read while one large frame is held, bound {bound}"
    );
    assert!(inbox.try_recv().is_err(), "no second large frame yet");

    drop(held);
    let Some(Inbound::Message { .. }) = inbox.recv().await else {
        panic!("the next message once the first is handled")
    };
}

#[tokio::test(start_paused = true)]
async fn sending_to_a_worker_that_does_not_read_never_waits() {
    let _pools = POOLS.lock().await;
    // The worker's end is never read: the first write blocks for good.
    let (ours, _theirs) = tokio::io::duplex(1024);
    let (read, write) = tokio::io::split(ours);
    let (link, _inbox) = Link::start(read, write, u64::MAX);
    link.send(ToWorker::Cancel {
        reason: "x".repeat(64 * 1024),
    })
    .unwrap();
    settle().await;
    for _ in 0..OUTBOX_CAPACITY {
        link.send(ToWorker::Ping).unwrap();
    }
    assert!(matches!(link.send(ToWorker::Ping), Err(SendRefused::Full)));
}
