//! Running external commands with errors that say which command failed, how,
//! and (for logged commands) what it printed last.
//!
//! Commands run in the foreground and are waited for; nothing started here
//! outlives the call that started it, except `exec` in `local_model::serve`.

use std::ffi::OsStr;
use std::fs::OpenOptions;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

/// Lines of a failed build's log repeated in the error, so CI output shows
/// the compiler's complaint without opening the log.
const LOG_TAIL_LINES: usize = 40;

/// `cargo`, preferring the one that runs this xtask (`$CARGO`).
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// The command line as one readable string.
pub fn describe(cmd: &Command) -> String {
    let mut line = cmd.get_program().to_string_lossy().into_owned();
    for arg in cmd.get_args() {
        line.push(' ');
        line.push_str(&arg.to_string_lossy());
    }
    line
}

/// Runs `cmd` with inherited stdio; fails unless it exits 0.
pub fn run(cmd: &mut Command) -> Result<()> {
    let line = describe(cmd);
    eprintln!("$ {line}");
    let status = cmd
        .stdin(Stdio::null())
        .status()
        .with_context(|| format!("start `{line}` (is it installed and on PATH?)"))?;
    if !status.success() {
        bail!("`{line}` failed ({status})");
    }
    Ok(())
}

/// Runs `cmd` with stdout and stderr appended to `log`; on failure the error
/// carries the last lines of the log.
pub fn run_logged(cmd: &mut Command, log: &Path) -> Result<()> {
    let line = describe(cmd);
    eprintln!("$ {line}  (output in {})", log.display());
    let open = || {
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .with_context(|| format!("open log {}", log.display()))
    };
    let status = cmd
        .stdin(Stdio::null())
        .stdout(open()?)
        .stderr(open()?)
        .status()
        .with_context(|| format!("start `{line}` (is it installed and on PATH?)"))?;
    if !status.success() {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n");
        bail!(
            "`{line}` failed ({status}); last lines of {}:\n{tail}",
            log.display()
        );
    }
    Ok(())
}

/// Runs `cmd` and returns its stdout; fails unless it exits 0.
pub fn stdout_of(cmd: &mut Command) -> Result<String> {
    let line = describe(cmd);
    String::from_utf8(stdout_bytes(cmd)?).with_context(|| format!("`{line}` printed non-UTF-8"))
}

/// Runs `cmd` and returns its stdout as bytes; fails unless it exits 0.
pub fn stdout_bytes(cmd: &mut Command) -> Result<Vec<u8>> {
    let line = describe(cmd);
    let output = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("start `{line}` (is it installed and on PATH?)"))?;
    if !output.status.success() {
        bail!("`{line}` failed ({})", output.status);
    }
    Ok(output.stdout)
}

/// True when `program args..` starts and exits 0; prints nothing.
pub fn succeeds<S: AsRef<OsStr>>(program: &str, args: &[S]) -> bool {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
