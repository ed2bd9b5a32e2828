//! The `micro` group: the in-process hot paths: the SSE parser every
//! provider stream goes through, the frame codec, the session writer. Each
//! beside a yardstick measured on the same bytes.

use std::io::Write;

use anyhow::{Result, bail};
use subagent_protocol::frame::{FrameReader, MaxPayload, encode_frame};
use subagent_protocol::message::LogLevel;
use subagent_protocol::session::{LogLine, LogSource, SessionEntry, SessionLine};
use subagent_protocol::{FromWorker, Usage, WorkerEvent};
use subagent_supervisor::session::SessionWriter;

use crate::context::BenchContext;
use crate::report::Row;
use crate::report::{Stats, Target};
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

    rows.extend(sse_rows()?);
    rows.extend(big_frame_rows()?);

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

/// MB/s (10^6 bytes per second) of `bytes` processed in `ms`.
fn mb_per_s(bytes: usize, ms: f64) -> f64 {
    bytes as f64 / 1e6 / (ms / 1e3)
}

/// A realistic OpenAI Chat stream: many small `data:` events, as llama-server
/// and the hosted APIs send them, about 16 MB in all.
fn chat_stream() -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0u64;
    while out.len() < 16 * 1024 * 1024 {
        out.extend_from_slice(
            format!(
                "data: {{\"id\":\"chatcmpl-{i}\",\"object\":\"chat.completion.chunk\",\"created\":1732400000,\"model\":\"smollm2\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\" token{i} of the answer\"}},\"finish_reason\":null}}]}}\n\n"
            )
            .as_bytes(),
        );
        i += 1;
    }
    out.extend_from_slice(b"data: [DONE]\n\n");
    out
}

/// The worker's SSE parser fed in 16 KiB reads, against a plain loop that
/// counts `\n\n` over the same bytes.
fn sse_rows() -> Result<Vec<Row>> {
    use subagent_worker::provider::sse::SseParser;
    let stream = chat_stream();
    let mut events = Vec::new();
    let parse = time_n(20, 3, || {
        let mut parser = SseParser::new();
        events.clear();
        let mut count = 0usize;
        for chunk in stream.chunks(16 * 1024) {
            parser.push(chunk, &mut events)?;
            count += events.len();
            events.clear();
        }
        if parser.finish()?.is_some() {
            count += 1;
        }
        std::hint::black_box(count);
        Ok(())
    })?;
    let scan = time_n(20, 3, || {
        // Deliberately the simplest loop: the yardstick is "look at every
        // byte once", not a vectorised search.
        let mut count = 0usize;
        let mut previous = 0u8;
        for &byte in std::hint::black_box(&stream) {
            if byte == b'\n' && previous == b'\n' {
                count += 1;
            }
            previous = byte;
        }
        std::hint::black_box(count);
        Ok(())
    })?;
    let scan_rate = mb_per_s(stream.len(), Stats::of(&scan).median);
    let parse_rate = mb_per_s(stream.len(), Stats::of(&parse).median);
    Ok(vec![
        Row::single(
            "micro.sse_parse",
            "SSE parse of a 16 MB OpenAI Chat stream in 16 KiB reads (events out)",
            "MB/s",
            parse_rate,
        )
        .against(
            "a plain byte loop counting \\n\\n on the same bytes",
            scan_rate,
        )
        .target(Target::All(vec![
            Target::AtLeast(500.0),
            Target::RatioAtLeast(0.3),
        ])),
    ])
}

/// Encode + decode of 1 MiB text frames, against copying the same bytes.
fn big_frame_rows() -> Result<Vec<Row>> {
    const FRAMES: usize = 64;
    let text = "The quick brown fox jumps over the lazy dog. ".repeat(1024 * 1024 / 45 + 1);
    let text = text.get(..1024 * 1024).unwrap_or(&text).to_owned();
    let msg = FromWorker::Event(WorkerEvent::TextDelta { text: text.clone() });
    let bytes = FRAMES * text.len();
    let codec = time_n(20, 3, || {
        for _ in 0..FRAMES {
            let frame = encode_frame(&msg, MaxPayload::default())?;
            let mut reader = FrameReader::new(frame.as_slice(), MaxPayload::default());
            let decoded = reader.read::<FromWorker>()?;
            std::hint::black_box(decoded);
        }
        Ok(())
    })?;
    let mut target = vec![0u8; text.len()];
    let copy = time_n(20, 3, || {
        for _ in 0..FRAMES {
            target.copy_from_slice(std::hint::black_box(text.as_bytes()));
            std::hint::black_box(&target);
        }
        Ok(())
    })?;
    let gb = |ms: f64| bytes as f64 / 1e9 / (ms / 1e3);
    Ok(vec![
        Row::single(
            "micro.frame_1mib",
            "frame encode+decode, 1 MiB text deltas (payload bytes)",
            "GB/s",
            gb(Stats::of(&codec).median),
        )
        .against("memcpy of the same bytes", gb(Stats::of(&copy).median))
        .target(Target::AtLeast(2.0)),
    ])
}
