//! The `tools` group: the tools that act (issue 35), called in process as
//! the worker calls them (`run_tool`, a fresh context per workspace):
//! `edit_file` on a 1 MiB file (read, replace, temp file, rename, on a
//! Landlocked thread), and `bash -c true` beside `python_execute`'s `pass`,
//! both through the same tool sandbox.

use anyhow::{Result, bail};
use subagent_tools::{Bash, EditFile, PythonExecute, ToolContext, run_tool};

use crate::context::BenchContext;
use crate::report::{Row, Target};
use crate::timing::time_n_async;

/// One line of the edited file; 16,384 of them make 1 MiB.
const LINE: &str = "fn line() -> u32 { 0 } // padding to sixty-four bytes......\n";

pub fn run(cx: &BenchContext) -> Result<Vec<Row>> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let dir = tempfile::tempdir()?;
    let ctx = ToolContext::new(dir.path());
    let mut rows = Vec::new();

    let mut text = LINE.repeat(1024 * 1024 / LINE.len());
    text.push_str("const MARKER: u32 = 0;\n");
    std::fs::write(dir.path().join("big.rs"), &text)?;
    let mut i = 0u64;
    let edit = rt.block_on(time_n_async(cx.iterations.max(30), 3, || {
        let arguments = serde_json::json!({
            "file_path": "big.rs",
            "old_string": format!("MARKER: u32 = {i};"),
            "new_string": format!("MARKER: u32 = {};", i + 1),
        })
        .to_string();
        i += 1;
        let ctx = &ctx;
        async move {
            let out = run_tool(&EditFile, &arguments, ctx).await;
            if out.is_error {
                bail!("edit_file failed: {}", out.output);
            }
            Ok(())
        }
    }))?;
    rows.push(
        Row::timed(
            "tools.edit_file_1mib",
            "edit_file: one unique replacement in a 1 MiB file, written back atomically",
            "ms",
            &edit,
        )
        .target(Target::AtMost(5.0)),
    );

    let n = cx.iterations.max(20);
    let python = Row::timed(
        "tools.python_execute_pass",
        "python_execute `pass`: one call through the tool sandbox",
        "ms",
        &rt.block_on(time_n_async(n, 3, || {
            call(&PythonExecute, r#"{"code": "pass"}"#, &ctx)
        }))?,
    );
    let bash = Row::timed(
        "tools.bash_true",
        "bash `true`: one call through the same tool sandbox",
        "ms",
        &rt.block_on(time_n_async(n, 3, || {
            call(&Bash, r#"{"command": "true"}"#, &ctx)
        }))?,
    )
    .against_row(&python)
    .target(Target::RatioAtMost(1.0));
    rows.push(python);
    rows.push(bash);
    Ok(rows)
}

async fn call(tool: &dyn subagent_tools::Tool, arguments: &str, ctx: &ToolContext) -> Result<()> {
    let out = run_tool(tool, arguments, ctx).await;
    if out.is_error {
        bail!("{} failed: {}", tool.name(), out.output);
    }
    Ok(())
}
