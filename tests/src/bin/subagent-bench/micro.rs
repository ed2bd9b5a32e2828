//! The `micro` group: the in-process hot paths: frame codec, session
//! writer. Each beside a yardstick measured on the same bytes.

use std::io::Write;

use anyhow::{Result, bail};
use subagent_protocol::frame::{FrameReader, MaxPayload, encode_frame};
use subagent_protocol::message::LogLevel;
use subagent_protocol::session::{LogLine, LogSource, SessionEntry, SessionLine};
use subagent_protocol::{FromWorker, Usage, WorkerEvent};
use subagent_supervisor::session::SessionWriter;

use crate::context::BenchContext;
use crate::report::Row;
use crate::timing::{time_n, time_n_async};

pub fn run(_cx: &BenchContext) -> Result<Vec<Row>> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut rows = Vec::new();

    // Codec: typical event frames, encode + decode, per 10k frames.
    let event = FromWorker::Event(WorkerEvent::Usage {
        turn: 3,
        usage: Usage {
            input: 1234,
            output: 567,
            turns: 1,
            ..Usage::default()
        },
    });
    let text = FromWorker::Event(WorkerEvent::TextDelta {
        text: "The quick brown fox jumps over the lazy dog. ".repeat(4),
    });
    for (id, name, msg) in [
        (
            "micro.frame_usage_10k",
            "frame encode+decode, usage event, 10k frames",
            event,
        ),
        (
            "micro.frame_text_10k",
            "frame encode+decode, 180-byte text delta, 10k frames",
            text,
        ),
    ] {
        let samples = time_n(50, 5, || {
            let mut buf = Vec::new();
            for _ in 0..10_000 {
                buf.extend_from_slice(&encode_frame(&msg, MaxPayload::default())?);
            }
            let mut reader = FrameReader::new(buf.as_slice(), MaxPayload::default());
            let mut count = 0;
            while let Some(m) = reader.read::<FromWorker>()? {
                std::hint::black_box(m);
                count += 1;
            }
            if count != 10_000 {
                bail!("decoded {count} frames");
            }
            Ok(())
        })?;
        let json_baseline = time_n(50, 5, || {
            let mut buf = Vec::new();
            for _ in 0..10_000 {
                serde_json::to_writer(&mut buf, &format!("{msg:?}"))?;
                buf.push(b'\n');
            }
            std::hint::black_box(buf);
            Ok(())
        })?;
        rows.push(Row::timed(id, name, "ms", &samples).against(
            "serde_json encode of the Debug string, 10k (encode only)",
            crate::report::Stats::of(&json_baseline).median,
        ));
    }

    // Session writer: lines per batch of 1,000 (flush per line, no fsync).
    let sdir = tempfile::tempdir()?;
    let mut j = 0;
    let raw = Row::timed(
        "micro.raw_lines_1k",
        "baseline: 1,000 pre-serialized lines, write_all+flush each",
        "ms",
        &time_n(30, 3, || {
            j += 1;
            let mut f = std::fs::File::create(sdir.path().join(format!("r{j}.jsonl")))?;
            for i in 0..1000 {
                f.write_all(format!("{{\"type\":\"log\",\"message\":\"line {i}\"}}\n").as_bytes())?;
                f.flush()?;
            }
            Ok(())
        })?,
    );
    let mut k = 0;
    let writer = Row::timed(
        "micro.session_writer_1k",
        "session writer: 1,000 log lines, serialized, one write_all + flush per line",
        "ms",
        &rt.block_on(time_n_async(30, 3, || {
            k += 1;
            let path = sdir.path().join(format!("w{k}.jsonl"));
            async move {
                let w = SessionWriter::create(&path)?;
                for i in 0..1000 {
                    w.append(SessionLine::now(SessionEntry::Log(LogLine {
                        level: LogLevel::Info,
                        source: LogSource::Supervisor,
                        message: format!("line {i}"),
                    })))
                    .await?;
                }
                w.close().await?;
                Ok(())
            }
        }))?,
    )
    .against_row(&raw);
    rows.push(raw);
    rows.push(writer);
    Ok(rows)
}
