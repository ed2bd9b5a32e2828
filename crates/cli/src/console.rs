//! The CLI's only way to write to the terminal.
//!
//! `println!` panics when stdout is gone (`subagent run --json | head -c
//! 100` closes the pipe early), and a panic is exit 101 with a backtrace
//! hint. A closed stdout or stderr is normal in pipelines: whatever the run
//! produced is already in its session file, so these writes give up quietly
//! and the exit status stays the run's own.
//!
//! Text a model or a tool chose (an answer, an error naming a tool) may
//! hold escape sequences: [`out_text`] and [`err`] strip them when their
//! stream is a terminal ([`strip_controls`]), and leave a pipe's bytes as
//! they are.

use std::io::{ErrorKind, IsTerminal, Write};

use subagent_supervisor::terminal_text::strip_controls;

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

/// Like [`out`], for text a model or a tool chose: stripped of control
/// sequences when stdout is a terminal, as it is otherwise.
pub fn out_text(text: &str) -> std::io::Result<()> {
    if std::io::stdout().is_terminal() {
        out(&strip_controls(text))
    } else {
        out(text)
    }
}

/// Writes `subagent: <text>` to stderr, stripped of control sequences when
/// stderr is a terminal (errors quote names a model chose); a stderr nobody
/// reads is ignored (there is nowhere left to report it).
pub fn err(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let text = if stderr.is_terminal() {
        strip_controls(text)
    } else {
        text.into()
    };
    let _ = writeln!(stderr, "subagent: {text}");
}
