//! The `live` group: what `subagent ps` costs. Per run, the live record
//! every run keeps (made, brought up to date through a run's events, and
//! removed, as the run loop pays it; and one sealed write, as the writer
//! thread pays it); and `subagent ps --json` over 5,000 live runs.
//!
//! The 5,000 runs are 5,000 real live records, made by the supervisor's own
//! code (`LiveRun::begin`) in this process, which holds their 5,000 locks
//! as one supervisor with 5,000 live runs would: `ps` (another process)
//! checks each seal, each lock's holder and the holder's start time, as it
//! does for real runs. No worker runs: `ps` never looks at workers.

use std::process::{Command, Stdio};

use anyhow::{Result, bail};
use subagent_protocol::{Usage, WorkerEvent};
use subagent_supervisor::live::{LiveRecord, LiveRun, LiveState};
use subagent_supervisor::session::key::session_key;
use subagent_supervisor::session::run_ids::new_run_id;

use crate::context::BenchContext;
use crate::report::{Row, Target};
use crate::timing::time_n;

/// Live runs `ps` lists in the scale row.
const LIVE_RUNS: usize = 5_000;

/// Looks at the 5,000 runs: each spawns `subagent ps`.
const PS_SAMPLES: usize = 10;

pub fn run(cx: &BenchContext) -> Result<Vec<Row>> {
    let sessions = tempfile::tempdir()?;
    let dir = sessions.path();
    let mut rows = Vec::new();

    // A run's events as the run loop sees them: two turns, streamed text,
    // a tool call, usage.
    let text = WorkerEvent::TextDelta {
        text: "some streamed words ".into(),
    };
    let usage = WorkerEvent::Usage {
        turn: 1,
        usage: Usage {
            input: 1_000,
            output: 100,
            turns: 1,
            ..Usage::default()
        },
    };
    let events = [
        WorkerEvent::TurnStart { turn: 1 },
        text.clone(),
        text.clone(),
        WorkerEvent::ToolCall {
            turn: 1,
            call_id: "c1".into(),
            name: "bash_read".into(),
            arguments_json: "{}".into(),
        },
        usage.clone(),
        WorkerEvent::ToolResult {
            call_id: "c1".into(),
            name: "bash_read".into(),
            output: "x".into(),
            is_error: false,
        },
        WorkerEvent::TurnStart { turn: 2 },
        text.clone(),
        text,
        usage,
    ];
    let samples = time_n(cx.iterations, 20, || {
        let live = LiveRun::begin(dir, &new_run_id(), "general", "bench", None);
        if live.run_id().is_none() {
            bail!("no live record was made under {}", dir.display());
        }
        live.worker_started(1);
        for event in &events {
            live.observe(event);
        }
        live.finishing();
        drop(live);
        Ok(())
    })?;
    rows.push(
        Row::timed(
            "live.record_per_run",
            "a run's live record as the run loop pays it: made (create, lock, write, rename), 10 worker events, removed",
            "ms",
            &samples,
        )
        .target(Target::AtMost(0.1))
        .note("beside spawn.supervised_run (about 2 ms, median) it is below that row's run-to-run spread"),
    );

    let key = session_key()?;
    let record = LiveRecord {
        run_id: new_run_id(),
        parent_run_id: None,
        agent: "general".into(),
        model: "bench".into(),
        state: LiveState::RunningTool,
        tool: Some("bash_read".into()),
        state_since_ms: 1,
        last_event_ms: 1,
        started_ms: 1,
        turns: 2,
        input_tokens: 1_000,
        cached_input_tokens: 0,
        output_tokens: 100,
        cost: 0.0,
        worker_pid: Some(1),
        supervisor_pid: std::process::id(),
        supervisor_start: 1,
        session_file: Some(dir.join("2026/11/28/x-general.jsonl").display().to_string()),
    };
    let file = std::fs::File::create(dir.join("one-record"))?;
    let samples = time_n(cx.iterations, 20, || {
        use std::os::unix::fs::FileExt;
        let sealed = record.seal(key);
        file.write_all_at(&sealed, 0)?;
        file.set_len(sealed.len() as u64)?;
        Ok(())
    })?;
    rows.push(Row::timed(
        "live.record_write",
        "one update of a record as the writer thread pays it: sealed (JSON, HMAC-SHA256), written in place",
        "ms",
        &samples,
    ));

    let held: Vec<LiveRun> = (0..LIVE_RUNS)
        .map(|_| LiveRun::begin(dir, &new_run_id(), "general", "bench", None))
        .collect();
    if held.iter().any(|r| r.run_id().is_none()) {
        bail!("not every live record could be made (open-files limit?)");
    }
    let ps = cx.binary("subagent")?;
    let samples = time_n(PS_SAMPLES, 2, || {
        let out = Command::new(&ps)
            .args(["ps", "--json", "--sessions-dir"])
            .arg(dir)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()?;
        let runs: serde_json::Value = serde_json::from_slice(&out.stdout)?;
        let listed = runs.as_array().map_or(0, Vec::len);
        if !out.status.success() || listed != LIVE_RUNS {
            bail!(
                "subagent ps listed {listed} of {LIVE_RUNS} live runs ({})",
                out.status
            );
        }
        Ok(())
    })?;
    drop(held);
    rows.push(
        Row::timed(
            "live.ps_5000",
            "`subagent ps --json` over 5,000 live runs (records held by one process), whole process",
            "ms",
            &samples,
        )
        .target(Target::AtMost(1_000.0)),
    );
    Ok(rows)
}
