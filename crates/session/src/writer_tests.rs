use subagent_protocol::message::LogLevel;
use subagent_protocol::session::{LogLine, LogSource, SessionEntry, SessionLine};

use super::pool::WRITER_STACK_BYTES;
use super::*;

fn log(message: &str) -> SessionLine {
    SessionLine::now(SessionEntry::Log(LogLine {
        level: LogLevel::Info,
        source: LogSource::Supervisor,
        message: message.into(),
    }))
}

#[tokio::test]
async fn every_line_is_one_json_object_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/run.jsonl");
    let writer = SessionWriter::create(&path).unwrap();
    for i in 0..100 {
        writer
            .append(log(&format!("line {i}\nwith newline")))
            .await
            .unwrap();
    }
    assert_eq!(writer.close().await.unwrap(), 100);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 100);
    for (i, l) in lines.iter().enumerate() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["type"], "log");
        assert_eq!(v["message"], format!("line {i}\nwith newline"));
    }
}

#[tokio::test]
async fn an_existing_session_file_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    std::fs::write(&path, "keep me\n").unwrap();
    let err = SessionWriter::create(&path).unwrap_err();
    assert!(matches!(err, SessionWriterError::Create { .. }), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep me\n");
}

#[test]
fn parent_lines_are_appended_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let parent = dir.path().join("parent.jsonl");
    std::fs::write(&parent, "{\"type\":\"x\"}\n").unwrap();
    append_to_parent_blocking(&parent, &log("child started")).unwrap();
    let text = std::fs::read_to_string(&parent).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(text.lines().nth(1).unwrap().contains("child started"));
}

#[test]
fn a_missing_parent_file_is_an_error_not_a_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let parent = dir.path().join("nope.jsonl");
    assert!(append_to_parent_blocking(&parent, &log("x")).is_err());
    assert!(!parent.exists());
}

#[tokio::test]
async fn parent_lines_are_appended_off_the_runtime_threads() {
    let dir = tempfile::tempdir().unwrap();
    let parent = dir.path().join("parent.jsonl");
    std::fs::write(&parent, "").unwrap();
    append_to_parent(&parent, &log("child started"))
        .await
        .unwrap();
    let text = std::fs::read_to_string(&parent).unwrap();
    assert!(text.contains("child started"), "{text}");
}

#[tokio::test]
async fn the_closing_line_comes_after_every_queued_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let writer = SessionWriter::create(&path).unwrap();
    for i in 0..50 {
        writer.append(log(&format!("line {i}"))).await.unwrap();
    }
    assert_eq!(writer.close_with(log("the end")).await.unwrap(), 51);
    let text = std::fs::read_to_string(&path).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["message"], "the end");
}

#[test]
fn a_session_file_is_written_and_closed_without_an_async_runtime() {
    // What a Drop needs: no runtime to spawn on, nothing to await.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let writer = SessionWriter::create(&path).unwrap();
    assert_eq!(writer.finish_blocking(log("the end")).unwrap(), 1);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 1);
    assert!(text.ends_with("\n"));
}

#[tokio::test]
async fn a_closing_line_handed_over_is_written_even_if_the_close_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let writer = SessionWriter::create(&path).unwrap();
    writer.append(log("first")).await.unwrap();
    drop(writer.close_with(log("the end")));
    // The writer thread finishes on its own; wait for the file to say so.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(&path).unwrap();
        if text.lines().count() == 2 {
            assert!(text.lines().last().unwrap().contains("the end"));
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{text}");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// Names of this process's threads that start with `prefix`, as the OS sees
/// them (`comm`, 15 bytes at most).
fn threads_named(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.unwrap().path().join("comm")).ok())
        .filter(|comm| comm.starts_with(prefix))
        .count()
}

fn lines_of(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_files_written_at_once_each_keep_all_their_lines_in_order() {
    const FILES: usize = 50;
    const LINES: usize = 300;
    let dir = tempfile::tempdir().unwrap();
    let mut writers: Vec<_> = (0..FILES)
        .map(|f| {
            let path = dir.path().join(format!("run-{f}.jsonl"));
            SessionWriter::create(&path).unwrap()
        })
        .collect();
    // Five tasks, ten files each, interleaving their appends line by line.
    let mut tasks = Vec::new();
    for _ in 0..5 {
        let mine: Vec<SessionWriter> = writers.drain(..10).collect();
        tasks.push(tokio::spawn(async move {
            for i in 0..LINES {
                for w in &mine {
                    w.append(log(&format!("{} line {i}", w.path().display())))
                        .await
                        .unwrap();
                }
            }
            let mut counts = Vec::new();
            for w in mine {
                let path = w.path().to_owned();
                counts.push((path, w.close_with(log("the end")).await.unwrap()));
            }
            counts
        }));
    }
    for task in tasks {
        for (path, count) in task.await.unwrap() {
            assert_eq!(count, LINES as u64 + 1, "{}", path.display());
            let lines = lines_of(&path);
            assert_eq!(lines.len(), LINES + 1, "{}", path.display());
            for (i, line) in lines[..LINES].iter().enumerate() {
                assert_eq!(line["message"], format!("{} line {i}", path.display()));
            }
            assert_eq!(lines[LINES]["message"], "the end");
        }
    }
}

#[tokio::test]
async fn fifty_open_files_share_at_most_the_pools_threads() {
    let dir = tempfile::tempdir().unwrap();
    let writers: Vec<_> = (0..50)
        .map(|f| SessionWriter::create(&dir.path().join(format!("run-{f}.jsonl"))).unwrap())
        .collect();
    for w in &writers {
        w.append(log("hello")).await.unwrap();
    }
    // Other tests use the process-wide pool at the same time: the cap holds
    // for all of them together.
    let threads = threads_named("session-writer");
    assert!(threads <= POOL_THREADS, "{threads} writer threads");
    for w in writers {
        assert_eq!(w.close().await.unwrap(), 1);
    }
    // A thread names itself once it runs, which the closes prove: this
    // counts the right threads.
    let threads = threads_named("session-writer");
    assert!(
        (1..=POOL_THREADS).contains(&threads),
        "{threads} writer threads"
    );
}

/// A writer on `pool` for a new file at `path`.
fn new_writer(pool: &Pool, path: &Path) -> SessionWriter {
    let file = OpenOptions::new()
        .append(true)
        .create_new(true)
        .open(path)
        .unwrap();
    SessionWriter::start(pool, file, path).unwrap()
}

#[tokio::test]
async fn pool_threads_start_only_when_every_running_one_is_busy() {
    let dir = tempfile::tempdir().unwrap();
    let pool = Pool::new("lazy-writer", 2);
    let threads = || pool.threads.lock().unwrap().len();
    assert_eq!(threads(), 0, "nothing written, nothing started");
    let open = |name: &str| new_writer(&pool, &dir.path().join(name));
    let a = open("a.jsonl");
    assert_eq!(threads(), 1);
    let b = open("b.jsonl");
    assert_eq!(threads(), 2);
    let c = open("c.jsonl");
    assert_eq!(threads(), 2, "the cap");
    for w in [a, b, c] {
        w.append(log("x")).await.unwrap();
        assert_eq!(w.close().await.unwrap(), 1);
    }
    // A thread names itself once it runs, which the closes prove.
    assert_eq!(threads_named("lazy-writer"), 2);
}

#[tokio::test]
async fn a_file_that_fails_to_write_stops_alone_and_its_thread_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    // One thread, so both files are surely on it.
    let pool = Pool::new("full-writer", 1);
    let full = Path::new("/dev/full");
    let failing = SessionWriter::start(
        &pool,
        OpenOptions::new().append(true).open(full).unwrap(),
        full,
    )
    .unwrap();
    let path = dir.path().join("fine.jsonl");
    let fine = new_writer(&pool, &path);

    failing.append(log("no space")).await.unwrap();
    for i in 0..3 {
        fine.append(log(&format!("line {i}"))).await.unwrap();
    }
    // One thread in queue order: once this close returns, the failed write
    // came and went before it.
    assert_eq!(fine.close_with(log("the end")).await.unwrap(), 4);
    let lines = lines_of(&path);
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[3]["message"], "the end");

    let err = failing.append(log("more")).await.unwrap_err();
    assert!(matches!(err, SessionWriterError::Stopped), "{err}");
    let err = failing.close().await.unwrap_err();
    match err {
        SessionWriterError::Write { path, source } => {
            assert_eq!(path, full);
            assert_eq!(source.kind(), io::ErrorKind::StorageFull, "{source}");
        }
        other => panic!("{other}"),
    }

    // The thread still writes files handed to it afterwards.
    let path = dir.path().join("later.jsonl");
    let later = new_writer(&pool, &path);
    later.append(log("still here")).await.unwrap();
    assert_eq!(later.close().await.unwrap(), 1);
    assert_eq!(threads_named("full-writer"), 1);
}

#[tokio::test]
async fn a_stalled_file_holds_at_most_its_queue_of_lines_then_append_waits() {
    use std::io::Read;

    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("stalled");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    // A reader that reads nothing until told: the pipe fills and the writer
    // thread blocks in `write`, as on a disk that stopped answering.
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let reader = std::thread::spawn({
        let fifo = fifo.clone();
        move || {
            let mut file = File::open(&fifo).unwrap();
            wait.recv().unwrap();
            let mut text = String::new();
            file.read_to_string(&mut text).unwrap();
            text
        }
    });
    let file = OpenOptions::new().append(true).open(&fifo).unwrap();
    let pool = Pool::new("stall-writer", 1);
    let writer = SessionWriter::start(&pool, file, &fifo).unwrap();

    let big = "x".repeat(4096);
    let mut queued = 0usize;
    let waiting = loop {
        let mut append = Box::pin(writer.append(log(&big)));
        match tokio::time::timeout(std::time::Duration::from_millis(200), &mut append).await {
            Ok(done) => {
                done.unwrap();
                queued += 1;
            }
            Err(_) => break append,
        }
        // The pipe holds 16 of these lines (64 KiB): far fewer than this.
        assert!(queued <= CHANNEL_CAPACITY + 64, "{queued} lines queued");
    };
    assert!(queued >= CHANNEL_CAPACITY, "waited after {queued} lines");

    go.send(()).unwrap();
    waiting.await.unwrap();
    assert_eq!(writer.close().await.unwrap(), queued as u64 + 1);
    let text = reader.join().unwrap();
    assert_eq!(text.lines().count(), queued + 1);
}

#[tokio::test]
async fn a_closing_line_is_written_from_a_thread_without_a_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let writer = SessionWriter::create(&path).unwrap();
    for i in 0..10 {
        writer.append(log(&format!("line {i}"))).await.unwrap();
    }
    let count = std::thread::spawn(move || writer.finish_blocking(log("the end")))
        .join()
        .unwrap()
        .unwrap();
    assert_eq!(count, 11);
    let lines = lines_of(&path);
    assert_eq!(lines.len(), 11);
    assert_eq!(lines[9]["message"], "line 9");
    assert_eq!(lines[10]["message"], "the end");
}

#[tokio::test]
async fn finish_blocking_on_a_runtime_thread_does_not_need_the_runtime() {
    // As from a `Drop` inside a task on the one-thread runtime: the pool
    // thread must finish the file without this thread's help.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let writer = SessionWriter::create(&path).unwrap();
    writer.append(log("first")).await.unwrap();
    assert_eq!(writer.finish_blocking(log("the end")).unwrap(), 2);
    assert_eq!(lines_of(&path).len(), 2);
}

#[tokio::test]
async fn a_deeply_nested_tool_call_fits_the_writer_threads_stack() {
    use subagent_protocol::session::ToolCallLine;

    // As deep as serde_json lets a worker's arguments be parsed.
    let depth = 127;
    let text = format!(
        "{}{}",
        "{\"a\":".repeat(depth),
        "1".to_owned() + &"}".repeat(depth)
    );
    let args: serde_json::Value = serde_json::from_str(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let writer = SessionWriter::create(&path).unwrap();
    writer
        .append(SessionLine::now(SessionEntry::ToolCall(ToolCallLine {
            turn: 1,
            call_id: "c".into(),
            name: "deep".into(),
            args,
        })))
        .await
        .unwrap();
    assert_eq!(writer.close().await.unwrap(), 1);
    // Too deep to parse back whole; compact JSON writes it as it came.
    let line = std::fs::read_to_string(&path).unwrap();
    assert!(line.contains(&format!("\"args\":{text}")), "{line}");
}

#[tokio::test]
async fn a_thread_that_cannot_start_fails_a_file_only_when_no_thread_runs() {
    let dir = tempfile::tempdir().unwrap();
    let pool = Pool::new("nostart-writer", 2);
    // Larger than any address space: the thread cannot be started.
    pool.stack_bytes
        .store(usize::MAX, std::sync::atomic::Ordering::Relaxed);
    let path = dir.path().join("first.jsonl");
    let file = OpenOptions::new()
        .append(true)
        .create_new(true)
        .open(&path)
        .unwrap();
    let refused = SessionWriter::start(&pool, file, &path).unwrap_err();
    assert!(
        matches!(refused, SessionWriterError::Thread(_)),
        "{refused}"
    );

    pool.stack_bytes
        .store(WRITER_STACK_BYTES, std::sync::atomic::Ordering::Relaxed);
    let busy = new_writer(&pool, &dir.path().join("busy.jsonl"));
    pool.stack_bytes
        .store(usize::MAX, std::sync::atomic::Ordering::Relaxed);
    // Under the cap, a second thread is due but cannot start: the running
    // one takes the file.
    let second = new_writer(&pool, &dir.path().join("second.jsonl"));
    assert_eq!(pool.threads.lock().unwrap().len(), 1);
    second.append(log("written all the same")).await.unwrap();
    busy.append(log("busy")).await.unwrap();
    assert_eq!(second.close().await.unwrap(), 1);
    assert_eq!(busy.close().await.unwrap(), 1);
    assert_eq!(
        lines_of(&dir.path().join("second.jsonl"))[0]["message"],
        "written all the same"
    );
}

#[tokio::test]
async fn a_file_its_writer_and_parent_appends_share_verifies_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let writer = SessionWriter::create(&path).unwrap();
    // A nested run's lifecycle lines land in this file while its own
    // writer still writes: one chain, whoever appends.
    for i in 0..50 {
        writer.append(log(&format!("own {i}"))).await.unwrap();
        append_to_parent(&path, &log(&format!("nested {i}")))
            .await
            .unwrap();
    }
    assert_eq!(writer.close().await.unwrap(), 50);
    let bytes = std::fs::read(&path).unwrap();
    let key = crate::key::session_key().unwrap();
    let verified = crate::chain::verify(key, &bytes).unwrap();
    assert_eq!(verified.lines, 100);
}
