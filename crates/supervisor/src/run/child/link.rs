//! The supervisor's end of the worker socket: a reader task that turns bytes
//! into frames under the protocol byte cap, and a writer task that sends
//! frames without ever making the watch loop wait.
//!
//! Both directions are bounded. Inbound, the cap is counted on the bytes
//! read, before anything is decoded: the reader never reads past
//! `limits.protocol_bytes` (plus the one byte that proves a flood), and
//! frames read but not yet handled are limited by their size
//! ([`QUEUED_BYTES`]), not only by their number, so a fast worker stalls in
//! its own writes instead of growing the supervisor. Outbound, a worker that
//! stops reading can hold up only the writer task, never a timeout.
//!
//! Across all workers, frames share two supervisor-wide pools of bytes, so
//! that a hundred hostile workers wait their turn on their sockets instead
//! of growing the supervisor, and none of them can starve the others.
//! A large frame (payload over [`SMALL_FRAME_MAX`]) takes its length (known
//! from its header) from the frame budget ([`FRAME_BUDGET_BYTES`]) before
//! its payload is read, and each link has at most one large frame in
//! flight ([`LARGE_FRAMES_PER_LINK`]). A small frame never touches that
//! budget: it is read first (a link reads one frame at a time, so a small
//! frame stalled before its last byte costs at most [`SMALL_FRAME_MAX`],
//! on its own link, and holds nothing shared), then takes its size from
//! the small-frame reserve ([`SMALL_FRAME_RESERVE_BYTES`]). So workers that
//! announce maximal frames and stall can hold the whole budget, but every
//! other worker's events and results still pass. Both are given back once
//! the watch loop has handled the frame. The supervisor's frame memory is
//! therefore at most the budget, plus the reserve, plus one small frame
//! being read on each link (1 MiB a worker stalled mid-frame: 5 GiB for
//! 5,000 hostile workers, beside the 0.8 MiB each of them costs the machine
//! anyway). Taking the reserve before the payload would make the bound
//! flat, but let 64 workers stalled mid-frame stop every run's events
//! until their idle timeout: liveness was chosen over that constant. A large payload is decoded as it
//! is read, on a blocking thread, so it costs its decoded size and no copy
//! beside it.
//!
//! It decides nothing about the run: a flood, a broken frame or a failed
//! write is reported to the watch loop, which decides what to do.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use subagent_protocol::frame::{
    self, AsyncFrameWriter, FrameError, HEADER_LEN, MAX_CONFIGURABLE_PAYLOAD, MaxPayload,
};
use subagent_protocol::{FromWorker, ToWorker};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, SemaphorePermit, mpsc};
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, DropGuard};

/// Frames read but not yet handled, at most (by count). The byte bound
/// below is the one that matters; this only sizes the channel.
const QUEUED_FRAMES: usize = 256;

/// Bytes of frames read but not yet handled, at most (16 MiB, one frame of
/// the largest default size). Past it the reader stops reading, the socket
/// buffer fills and the worker's writes block. The reader waits for room
/// before it reads a payload, so this is all the supervisor holds in
/// frames for one worker (a larger frame takes all of it).
pub(in crate::run) const QUEUED_BYTES: u32 = 16 * 1024 * 1024;

/// Payloads up to this size are small frames: read whole, then decoded
/// (for a small one the blocking-thread hop of a streamed decode costs more
/// than the copy saves), and counted against [`SMALL_FRAME_RESERVE_BYTES`]
/// once read instead of against the frame budget before. Every message a
/// well-behaved worker sends in practice (events, tool calls, results) is
/// far below it; the 1 MiB partial text a run keeps is of the same order.
const SMALL_FRAME_MAX: usize = 1024 * 1024;

/// Bytes of large frames (payload over [`SMALL_FRAME_MAX`]) being read or
/// waiting to be handled across every worker of this process, at most
/// (256 MiB): four frames of the largest configurable cap, fifteen of the
/// default one with their headers. It is what bounds the supervisor's
/// memory against many hostile workers, each of which may hold up to
/// [`QUEUED_BYTES`]: without it a hundred workers made it hold 1.7 GiB
/// (the `frame_memory` test). A frame larger than the whole budget takes
/// all of it (it can never wait forever); frames past it wait, their
/// workers' writes blocking, and none is refused. Small frames never wait
/// for it.
pub const FRAME_BUDGET_BYTES: u32 = 4 * MAX_CONFIGURABLE_PAYLOAD;

/// The budget itself, shared by every link of the process.
static FRAME_BUDGET: Semaphore = Semaphore::const_new(FRAME_BUDGET_BYTES as usize);

/// Bytes of small frames read but not yet handled across every worker of
/// this process, at most (64 MiB): sixty-four of the largest small frames,
/// tens of thousands of typical events. It bounds what workers flooding
/// small frames faster than their watch loops handle them can queue in
/// total; since a small frame takes it only once read whole, a worker that
/// stalls mid-frame holds none of it, and frames leave it as fast as the
/// watch loops run.
pub const SMALL_FRAME_RESERVE_BYTES: u32 = 64 * 1024 * 1024;

/// The reserve itself, shared by every link of the process.
static SMALL_FRAME_RESERVE: Semaphore = Semaphore::const_new(SMALL_FRAME_RESERVE_BYTES as usize);

/// Large frames one link may have in flight (being read or waiting to be
/// handled), at most: one worker's share of the frame budget is one frame,
/// so a worker sending many mid-sized frames cannot take the budget from
/// the others. A link reads its frames in order, so this costs a worker
/// only the overlap of reading its next large frame with the handling of
/// the last.
const LARGE_FRAMES_PER_LINK: usize = 1;

/// Messages to the worker waiting to be written. The supervisor sends at
/// most a `Start` and a `Cancel` per run; the room is for a `Ping` or two.
const OUTBOX_CAPACITY: usize = 8;

/// What the reader hands the watch loop, in the order it happened.
#[derive(Debug)]
pub(in crate::run) enum Inbound {
    /// One message. `held` keeps its bytes counted against [`QUEUED_BYTES`]
    /// and the frame budget or the small-frame reserve until the loop has
    /// handled it and drops it.
    Message { message: FromWorker, held: Held },
    /// The worker closed its end at a frame boundary.
    Eof,
    /// The stream broke (disconnect mid-frame, oversized or undecodable frame).
    Broken(FrameError),
    /// The worker sent more than the protocol byte cap; nothing past it was
    /// read.
    Flood,
    /// A message to the worker could not be written.
    WriteFailed { what: Outbound, error: FrameError },
}

/// A frame's share of its link's queue and of the supervisor-wide frame
/// budget or small-frame reserve (and, for a large frame, its link's
/// large-frame slot), given back when dropped.
#[derive(Debug)]
pub(in crate::run) struct Held {
    _queue: OwnedSemaphorePermit,
    _shared: SemaphorePermit<'static>,
    _large: Option<OwnedSemaphorePermit>,
}

/// The kinds of message the supervisor sends a worker, to say which one
/// could not be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::run) enum Outbound {
    Start,
    Cancel,
    Ping,
    SubagentResult,
    Python,
}

impl Outbound {
    fn of(message: &ToWorker) -> Self {
        match message {
            ToWorker::Start(_) => Self::Start,
            ToWorker::Cancel { .. } => Self::Cancel,
            ToWorker::Ping => Self::Ping,
            ToWorker::SubagentResult(_) => Self::SubagentResult,
            ToWorker::Python(_) => Self::Python,
        }
    }
}

/// An aborted-on-drop task, so that nothing outlives the loop that owns it.
#[derive(Debug)]
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Counts every byte read, for the cap and the queue.
struct CountingReader<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: AsyncRead + Unpin> AsyncRead for CountingReader<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = buf.filled().len() - before;
        self.count.fetch_add(read as u64, Ordering::Relaxed);
        poll
    }
}

/// The two tasks of one worker socket; dropping it stops both.
#[derive(Debug)]
pub(in crate::run) struct Link {
    outbox: mpsc::Sender<ToWorker>,
    _reader: AbortOnDrop,
    _writer: AbortOnDrop,
    /// Stops a payload being decoded on a blocking thread, which aborting
    /// the reader task cannot reach.
    _stop: DropGuard,
}

/// Why a message was not queued for the worker.
#[derive(Debug, thiserror::Error)]
pub(in crate::run) enum SendRefused {
    /// The worker has not taken the messages already queued.
    #[error("{OUTBOX_CAPACITY} messages are already waiting for the worker to read them")]
    Full,
    /// The writer task has stopped (a write failed).
    #[error("the connection to the worker is closed")]
    Closed,
}

impl Link {
    /// Starts the reader and writer tasks over the two halves of a socket;
    /// returns the link and the receiver of everything inbound.
    pub(in crate::run) fn start<R, W>(
        read: R,
        write: W,
        protocol_bytes: u64,
    ) -> (Self, mpsc::Receiver<Inbound>)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (inbound, inbox) = mpsc::channel(QUEUED_FRAMES);
        let stop = CancellationToken::new();
        let reader = tokio::spawn(read_frames(
            read,
            protocol_bytes,
            inbound.clone(),
            stop.clone(),
        ));
        let (outbox, pending) = mpsc::channel(OUTBOX_CAPACITY);
        let writer = tokio::spawn(write_frames(write, pending, inbound));
        let link = Self {
            outbox,
            _reader: AbortOnDrop(reader),
            _writer: AbortOnDrop(writer),
            _stop: stop.drop_guard(),
        };
        (link, inbox)
    }

    /// Queues a message for the worker and returns at once: a worker that
    /// does not read can make this fail, never wait.
    pub(in crate::run) fn send(&self, message: ToWorker) -> Result<(), SendRefused> {
        self.outbox.try_send(message).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => SendRefused::Full,
            mpsc::error::TrySendError::Closed(_) => SendRefused::Closed,
        })
    }
}

/// Reads frames until the stream ends, breaks or passes the cap; the last
/// thing sent is always `Eof`, `Broken` or `Flood`.
async fn read_frames<R: AsyncRead + Unpin + Send + 'static>(
    read: R,
    protocol_bytes: u64,
    inbound: mpsc::Sender<Inbound>,
    stop: CancellationToken,
) {
    let count = Arc::new(AtomicU64::new(0));
    // One byte past the cap is read so that a worker that sent exactly the
    // cap is not taken for a flood; past that the stream reads as ended.
    let capped = read.take(protocol_bytes.saturating_add(1));
    let mut source = Some(CountingReader {
        inner: capped,
        count: Arc::clone(&count),
    });
    let queue = Arc::new(Semaphore::new(QUEUED_BYTES as usize));
    let large = Arc::new(Semaphore::new(LARGE_FRAMES_PER_LINK));
    loop {
        let Some(reader) = source.take() else {
            return;
        };
        let read = read_frame(reader, &queue, &large, &stop).await;
        let flooded = count.load(Ordering::Relaxed) > protocol_bytes;
        let item = match read {
            // The cap cut the stream: at a frame boundary or inside one.
            Ok(None) | Err(FrameError::Truncated { .. }) if flooded => Inbound::Flood,
            Ok(Some((message, held, back))) => {
                source = Some(back);
                Inbound::Message { message, held }
            }
            Ok(None) => Inbound::Eof,
            Err(e) => Inbound::Broken(e),
        };
        let last = !matches!(item, Inbound::Message { .. });
        if inbound.send(item).await.is_err() || last {
            return;
        }
    }
}

/// One frame: its header, room for it in the link's queue, then either
/// (small) its payload and room in the small-frame reserve, or (large) the
/// link's large-frame slot, room in the frame budget and its payload;
/// waiting while any of them is full. Takes the reader and gives it back
/// with the message, since a large payload is read by a blocking thread
/// that owns it meanwhile; after an end or an error there is nothing more
/// to read.
async fn read_frame<R: AsyncRead + Unpin + Send + 'static>(
    mut source: R,
    queue: &Arc<Semaphore>,
    large: &Arc<Semaphore>,
    stop: &CancellationToken,
) -> Result<Option<(FromWorker, Held, R)>, FrameError> {
    let Some(len) = frame::read_header_async(&mut source, MaxPayload::default()).await? else {
        return Ok(None);
    };
    let size = u32::try_from(len + HEADER_LEN).unwrap_or(u32::MAX);
    let queued = Arc::clone(queue)
        .acquire_many_owned(size.min(QUEUED_BYTES))
        .await
        .map_err(|_| closed())?;
    if len <= SMALL_FRAME_MAX {
        let message = frame::read_payload_async(&mut source, len).await?;
        let reserve = RESERVE.take(size).await?;
        let held = Held {
            _queue: queued,
            _shared: reserve,
            _large: None,
        };
        return Ok(Some((message, held, source)));
    }
    let slot = Arc::clone(large)
        .acquire_owned()
        .await
        .map_err(|_| closed())?;
    let budget = BUDGET.take(size).await?;
    let held = Held {
        _queue: queued,
        _shared: budget,
        _large: Some(slot),
    };
    let stop = stop.clone();
    let handle = tokio::runtime::Handle::current();
    let decoded = tokio::task::spawn_blocking(move || {
        let decoded = frame::read_payload_streaming(
            BlockingRead {
                inner: &mut source,
                handle: &handle,
                stop: &stop,
            },
            len,
        );
        (decoded, source)
    })
    .await;
    let (decoded, source) = decoded.map_err(|e| FrameError::Io(std::io::Error::other(e)))?;
    Ok(Some((decoded?, held, source)))
}

/// One of the two supervisor-wide pools of frame bytes.
struct Pool {
    bytes: &'static Semaphore,
    /// All of it, the most one frame takes.
    total: u32,
    /// How the debug log names it.
    name: &'static str,
}

/// Large frames' pool: see [`FRAME_BUDGET_BYTES`].
const BUDGET: Pool = Pool {
    bytes: &FRAME_BUDGET,
    total: FRAME_BUDGET_BYTES,
    name: "the supervisor-wide frame budget",
};

/// Small frames' pool: see [`SMALL_FRAME_RESERVE_BYTES`].
const RESERVE: Pool = Pool {
    bytes: &SMALL_FRAME_RESERVE,
    total: SMALL_FRAME_RESERVE_BYTES,
    name: "the small-frame reserve",
};

impl Pool {
    /// `size` bytes of the pool, or all of it for a frame larger than the
    /// whole pool (so that it can never wait forever), waiting while it is
    /// full.
    async fn take(&self, size: u32) -> Result<SemaphorePermit<'static>, FrameError> {
        let cost = size.min(self.total);
        match self.bytes.try_acquire_many(cost) {
            Ok(permit) => Ok(permit),
            Err(_) => {
                // Said once per waiting frame: an operator (and the
                // hostile-workers tests) can see a pool holding frames back.
                tracing::debug!(bytes = size, "a frame waits for room in {}", self.name);
                self.bytes.acquire_many(cost).await.map_err(|_| closed())
            }
        }
    }
}

/// The semaphores live as long as the process or their link's task and are
/// never closed: a failed acquire cannot happen, but ends the stream.
fn closed() -> FrameError {
    FrameError::Io(std::io::Error::other("the frame budget was closed"))
}

/// An async stream read from a blocking thread, one read at a time; a
/// stopped link ends it with an error instead of waiting on the worker.
struct BlockingRead<'a, R> {
    inner: &'a mut R,
    handle: &'a tokio::runtime::Handle,
    stop: &'a CancellationToken,
}

impl<R: AsyncRead + Unpin> std::io::Read for BlockingRead<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buf);
        let stop = self.stop;
        self.handle.block_on(async move {
            tokio::select! {
                read = read => read,
                () = stop.cancelled() => Err(std::io::Error::other("the link to the worker was closed")),
            }
        })
    }
}

/// Writes queued messages in order until the queue closes or a write fails.
async fn write_frames<W: AsyncWrite + Unpin>(
    write: W,
    mut pending: mpsc::Receiver<ToWorker>,
    inbound: mpsc::Sender<Inbound>,
) {
    let mut writer = AsyncFrameWriter::new(write, MaxPayload::default());
    while let Some(message) = pending.recv().await {
        let what = Outbound::of(&message);
        if let Err(error) = writer.write(&message).await {
            let _ = inbound.send(Inbound::WriteFailed { what, error }).await;
            return;
        }
    }
}

#[cfg(test)]
#[path = "link_tests.rs"]
mod tests;
