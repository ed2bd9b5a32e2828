//! The `mcp` group: what a call of an MCP server's tool costs over the
//! server's own time (issue 36). The server is the fixture of the worker's
//! tests (standard-library Python; its `echo` answers at once).
//!
//! - `mcp.raw_round_trip`: the same server started bare, one `tools/call`
//!   line written to its stdin and the answer line read back: the server's
//!   own time plus one pipe round trip, the least any client pays.
//! - `mcp.tool_call`: the call as the worker makes it (`run_tool` on the
//!   `mcp__fx__echo` tool: the MCP client, the server in the tool sandbox,
//!   masking and the output cap).
//! - `mcp.tool_call_overhead`: the difference of the medians, against the
//!   2 ms the issue allows.
//! - `mcp.server_start`: starting the sandboxed server and listing its tools.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use subagent_protocol::{McpServerSpec, McpToolSelection};
use subagent_tools::mcp::start_servers;
use subagent_tools::{ToolContext, run_tool};

use crate::context::BenchContext;
use crate::report::{Row, Target};
use crate::timing::{time_n, time_n_async};

const PYTHON: &str = "/usr/bin/python3";

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../crates/worker/tests/fixtures/mcp_fixture.py")
}

const CALL: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}"#;

pub fn run(cx: &BenchContext) -> Result<Vec<Row>> {
    let n = cx.iterations.max(100);
    let raw = Row::timed(
        "mcp.raw_round_trip",
        "one tools/call line to the bare server and its answer line back",
        "ms",
        &raw_round_trips(n)?,
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let dir = tempfile::tempdir()?;
    let ctx = ToolContext::new(dir.path());
    let spec = McpServerSpec {
        name: "fx".into(),
        command: PYTHON.into(),
        args: vec![fixture().display().to_string(), "ok".into()],
        env: Vec::new(),
        read_only: vec![
            fixture()
                .parent()
                .context("the fixture's directory")?
                .display()
                .to_string(),
        ],
        startup_timeout_ms: 10_000,
        tool_timeout_ms: 10_000,
        tools: McpToolSelection::default(),
    };
    let mut starts = Vec::new();
    let (calls, start_samples) = rt.block_on(async {
        for _ in 0..10 {
            let begun = Instant::now();
            let start = start_servers(std::slice::from_ref(&spec), &ctx).await;
            starts.push(begun.elapsed().as_secs_f64() * 1e3);
            if start.tools.is_empty() {
                bail!("the fixture server did not start: {:?}", start.notes);
            }
            start.servers.stop().await;
        }
        let start = start_servers(std::slice::from_ref(&spec), &ctx).await;
        let Some(echo) = start.tools.iter().find(|t| t.name() == "mcp__fx__echo") else {
            bail!("the fixture server offers no echo: {:?}", start.notes);
        };
        let samples = time_n_async(n, 10, || async {
            let out = run_tool(echo.as_ref(), r#"{"text":"x"}"#, &ctx).await;
            if out.is_error || out.output != "x" {
                bail!("mcp__fx__echo failed: {}", out.output);
            }
            Ok(())
        })
        .await?;
        start.servers.stop().await;
        Ok::<_, anyhow::Error>((samples, std::mem::take(&mut starts)))
    })?;
    let call = Row::timed(
        "mcp.tool_call",
        "mcp__fx__echo through run_tool: MCP client, sandboxed server",
        "ms",
        &calls,
    )
    .against_row(&raw);
    let overhead = Row::single(
        "mcp.tool_call_overhead",
        "an MCP tool call's time over the server's own (difference of medians)",
        "ms",
        call.figure - raw.figure,
    )
    .target(Target::AtMost(2.0));
    let start = Row::timed(
        "mcp.server_start",
        "start the sandboxed fixture server and list its tools (python3 start included)",
        "ms",
        &start_samples,
    );
    Ok(vec![raw, call, overhead, start])
}

/// `n` timed round trips to the bare fixture server over its stdio.
fn raw_round_trips(n: usize) -> Result<Vec<f64>> {
    let mut server = Command::new(PYTHON)
        .arg(fixture())
        .arg("ok")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("start the fixture server")?;
    let mut input = server.stdin.take().context("its stdin")?;
    let mut output = BufReader::new(server.stdout.take().context("its stdout")?);
    let mut line = String::new();
    let samples = time_n(n, 10, || {
        input.write_all(CALL.as_bytes())?;
        input.write_all(b"\n")?;
        input.flush()?;
        line.clear();
        output.read_line(&mut line)?;
        if !line.contains(r#""text": "x""#) {
            bail!("unexpected answer: {line}");
        }
        Ok(())
    });
    drop(input);
    let _ = server.wait();
    samples
}
