//! The CLI's only way to write to the terminal.
//!
//! `println!` panics when stdout is gone (`subagent run --json | head -c
//! 100` closes the pipe early), and a panic is exit 101 with a backtrace
//! hint. A closed stdout or stderr is normal in pipelines: whatever the run
//! produced is already in its session file, so these writes give up quietly
//! and the exit status stays the run's own.

use std::io::{ErrorKind, Write};

/// Writes `text` and a newline to stdout; a closed stdout is not an error.
pub fn out(text: &str) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.write_all(b"\n"))
        .and_then(|()| stdout.flush());
    match written {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Writes `subagent: <text>` to stderr; a stderr nobody reads is ignored
/// (there is nowhere left to report it).
pub fn err(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "subagent: {text}");
}
