//! The `telemetry` group: what a run's trace spans cost the run. The
//! spans of a typical run (3 model turns, 2 tool calls) are built from its
//! worker events as the supervisor builds them, with telemetry off, on
//! (exporting to a loopback OTLP sink that answers 200), and on with a
//! dead collector (a closed port). Export happens on a thread of its own:
//! what a run pays is the span work and the queueing, timed here.

use std::io::{Read, Write};
use std::net::TcpListener;

use anyhow::Result;
use subagent_protocol::result::SubagentResult;
use subagent_protocol::{ErrorCode, ProviderKind, Usage, WorkerEvent};
use subagent_supervisor::telemetry::{
    DEFAULT_QUEUE_SPANS, ExportProtocol, RunStart, Settings, Telemetry,
};

use crate::context::BenchContext;
use crate::report::{Row, Target};
use crate::timing::time_n;

/// A loopback OTLP sink: reads each request, answers 200. Its port.
fn sink() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 1 << 16];
                // One request per connection is enough for the figure:
                // the exporter reconnects when the sink closes.
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            });
        }
    });
    Ok(port)
}

fn settings(url: String) -> Settings {
    Settings {
        traces_url: url,
        protocol: ExportProtocol::Protobuf,
        service_name: "subagent-bench".into(),
        include_content: false,
        queue_spans: DEFAULT_QUEUE_SPANS,
    }
}

/// The worker events of a run of 3 turns and 2 tool calls.
fn events() -> Vec<WorkerEvent> {
    let usage = Usage {
        input: 1200,
        output: 80,
        ..Usage::default()
    };
    let mut out = Vec::new();
    for turn in 1..=3u32 {
        out.push(WorkerEvent::TurnStart { turn });
        out.push(WorkerEvent::AssistantMessageEnd {
            turn,
            text: "ok".into(),
            stop_reason: if turn < 3 { "tool_calls" } else { "stop" }.into(),
            response_id: Some(format!("chatcmpl-bench-{turn}")),
        });
        out.push(WorkerEvent::Usage { turn, usage });
        if turn < 3 {
            let call_id = format!("call_{turn}");
            out.push(WorkerEvent::ToolCall {
                turn,
                call_id: call_id.clone(),
                name: "bash_find".into(),
                arguments_json: "{\"pattern\":\"*\"}".into(),
            });
            out.push(WorkerEvent::ToolResult {
                call_id,
                name: "bash_find".into(),
                output: "a.txt".into(),
                is_error: false,
            });
        }
    }
    out
}

fn one_run(telemetry: &Telemetry, events: &[WorkerEvent], result: &SubagentResult) {
    let spans = telemetry.run_spans(
        RunStart {
            run_id: "0192f0c0a1b2c3d4e5f60718293a4b5c",
            agent: "general",
            model: "scripted",
            provider: ProviderKind::OpenaiChat,
            task: "t",
        },
        None,
    );
    for event in events {
        spans.on_event(event, &|t: &str| t.to_owned());
    }
    spans.end(result);
}

pub fn run(cx: &BenchContext) -> Result<Vec<Row>> {
    let n = cx.iterations.max(200);
    let events = events();
    let result = SubagentResult::refusal(ErrorCode::InvalidInput, "bench");
    let time = |telemetry: &Telemetry| {
        time_n(n, 20, || {
            one_run(telemetry, &events, &result);
            Ok(())
        })
    };
    let off = time(&Telemetry::default())?;
    let live = Telemetry::start(&settings(format!("http://127.0.0.1:{}/v1/traces", sink()?)));
    let on = time(&live)?;
    let closed = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let dead = Telemetry::start(&settings(format!("http://127.0.0.1:{closed}/v1/traces")));
    let dead_times = time(&dead)?;
    let off_row = Row::timed(
        "telemetry.run_off",
        "a run's trace work, telemetry off",
        "ms",
        &off,
    )
    .target(Target::AtMost(0.01));
    let on_row = Row::timed(
        "telemetry.run_on",
        "a run's trace work, exporting to a loopback OTLP sink",
        "ms",
        &on,
    )
    .against_row(&off_row)
    .target(Target::OverBaselineAtMost(1.0))
    .note_if(
        live.dropped() > 0,
        format!("{} spans dropped", live.dropped()),
    );
    let dead_row = Row::timed(
        "telemetry.run_dead_collector",
        "a run's trace work, collector unreachable",
        "ms",
        &dead_times,
    )
    .against_row(&off_row)
    .target(Target::OverBaselineAtMost(1.0))
    .note_if(
        dead.dropped() > 0,
        format!("{} spans dropped", dead.dropped()),
    );
    Ok(vec![off_row, on_row, dead_row])
}
