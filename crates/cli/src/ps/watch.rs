//! `subagent ps --watch`: the list again every interval until told to stop.
//!
//! On a terminal (stdout one) it draws on the alternate screen, in place
//! (cursor home, each line cleared to its end, the rest of the screen
//! cleared), each line cut to the terminal's width; `q` (or Ctrl-C, or
//! SIGTERM) quits and gives the screen back as it was. Keys are read with
//! the terminal's line editing and echo off; signals stay on, so Ctrl-C is
//! a SIGINT as everywhere else. Piped, it prints the list every interval
//! (the table and a blank line, or with `--json` one array per line) until
//! SIGINT or SIGTERM, or until nobody reads the pipe.
//!
//! The terminal modes it changes are restored by a guard's drop, on every
//! way out but SIGKILL.

use std::io::{ErrorKind, IsTerminal, Read, Write};
use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use crate::exit::Ending;
use anyhow::{Context, Result};
use nix::sys::termios::{
    LocalFlags, SetArg, SpecialCharacterIndices, Termios, tcgetattr, tcsetattr,
};
use subagent_supervisor::session::display::format_duration;

use super::{Shape, look, render};

/// What wakes the loop before its interval is up.
enum Wake {
    /// A key was pressed (a byte of it).
    Key(u8),
    /// SIGINT or SIGTERM.
    Stop,
}

/// Keys that quit: `q`, `Q`, Ctrl-C and Ctrl-D (reaching the program as
/// bytes only if the terminal's signals were off).
const QUIT_KEYS: [u8; 4] = [b'q', b'Q', 0x03, 0x04];

pub(super) fn watch(dir: &Path, shape: Shape, interval: Duration) -> Result<Ending> {
    let (wake, woken) = channel();
    stop_on_signals(wake.clone());
    if shape.terminal {
        let keys = std::io::stdin().is_terminal();
        let _screen = Screen::enter(keys)?;
        if keys {
            read_keys(wake);
        }
        on_terminal(dir, shape, interval, &woken)?;
    } else {
        piped(dir, shape, interval, &woken)?;
    }
    Ok(Ending::Success)
}

/// Redraws until a quit key or a signal.
fn on_terminal(dir: &Path, shape: Shape, interval: Duration, woken: &Receiver<Wake>) -> Result<()> {
    loop {
        let listing = look(dir, shape)?;
        let body = render(&listing, shape)?;
        let title = format!(
            "subagent ps: {} live, every {} (q or Ctrl-C quits)  {}",
            listing.runs.len(),
            format_duration(u64::try_from(interval.as_millis()).unwrap_or(u64::MAX)),
            clock()
        );
        draw(&title, &body)?;
        match woken.recv_timeout(interval) {
            Ok(Wake::Key(key)) if QUIT_KEYS.contains(&key) => return Ok(()),
            Ok(Wake::Stop) | Err(RecvTimeoutError::Disconnected) => return Ok(()),
            Ok(Wake::Key(_)) | Err(RecvTimeoutError::Timeout) => {}
        }
    }
}

/// Prints the list every interval until a signal or a closed pipe.
fn piped(dir: &Path, shape: Shape, interval: Duration, woken: &Receiver<Wake>) -> Result<()> {
    loop {
        let listing = look(dir, shape)?;
        let text = if shape.json {
            serde_json::to_string(&listing.runs).context("cannot write the JSON")?
        } else {
            format!("{}\n", render(&listing, shape)?)
        };
        let mut stdout = std::io::stdout().lock();
        let written = writeln!(stdout, "{text}").and_then(|()| stdout.flush());
        match written {
            Err(e) if e.kind() == ErrorKind::BrokenPipe => return Ok(()),
            other => other.context("cannot write to stdout")?,
        }
        drop(stdout);
        match woken.recv_timeout(interval) {
            Ok(Wake::Stop) | Err(RecvTimeoutError::Disconnected) => return Ok(()),
            Ok(Wake::Key(_)) | Err(RecvTimeoutError::Timeout) => {}
        }
    }
}

/// One frame: home, every line cut to the width and cleared to its end,
/// as many as the screen holds, then the rest of the screen cleared.
fn draw(title: &str, body: &str) -> Result<()> {
    let (rows, cols) = console::Term::stdout().size();
    let (rows, cols) = (usize::from(rows.max(2)), usize::from(cols.max(20)));
    let mut frame = String::from("\x1b[H");
    for line in std::iter::once(title)
        .chain(std::iter::once(""))
        .chain(body.lines())
        .take(rows - 1)
    {
        frame.extend(line.chars().take(cols));
        frame.push_str("\x1b[K\n");
    }
    frame.push_str("\x1b[J");
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(frame.as_bytes())
        .and_then(|()| stdout.flush())
        .context("cannot draw on the terminal")
}

/// `12:00:01` (UTC), the time of the frame.
fn clock() -> String {
    let now = subagent_protocol::time::now_rfc3339_ms();
    now.get(11..19).map_or(now.clone(), |t| format!("{t} UTC"))
}

/// The terminal as the watch uses it, given back as it was when dropped.
struct Screen {
    /// The terminal's modes before, when keys are read.
    saved: Option<Termios>,
}

impl Screen {
    fn enter(keys: bool) -> Result<Self> {
        let saved = if keys {
            let stdin = std::io::stdin();
            let saved = tcgetattr(&stdin).context("cannot read the terminal's modes")?;
            let mut raw = saved.clone();
            raw.local_flags
                .remove(LocalFlags::ICANON | LocalFlags::ECHO);
            raw.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
            raw.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
            tcsetattr(&stdin, SetArg::TCSANOW, &raw).context("cannot set the terminal's modes")?;
            Some(saved)
        } else {
            None
        };
        let screen = Self { saved };
        // Alternate screen, cursor hidden.
        print_raw("\x1b[?1049h\x1b[?25l");
        Ok(screen)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        print_raw("\x1b[?25h\x1b[?1049l");
        if let Some(saved) = &self.saved {
            let _ = tcsetattr(std::io::stdin(), SetArg::TCSANOW, saved);
        }
    }
}

fn print_raw(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// Sends every byte typed on stdin to `wake`, on a thread of its own (it
/// blocks in `read` and ends with the process).
fn read_keys(wake: Sender<Wake>) {
    let _ = std::thread::Builder::new()
        .name("ps-keys".to_owned())
        .spawn(move || {
            let mut byte = [0u8; 1];
            let mut stdin = std::io::stdin().lock();
            while let Ok(1) = stdin.read(&mut byte) {
                if wake.send(Wake::Key(byte[0])).is_err() {
                    return;
                }
            }
            let _ = wake.send(Wake::Key(0x04));
        });
}

/// Sends [`Wake::Stop`] on SIGINT or SIGTERM, watched on a thread of its
/// own with a small runtime (the way every command watches them).
fn stop_on_signals(wake: Sender<Wake>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let Ok(runtime) = runtime else {
        return;
    };
    // The handlers are installed before this returns: a signal from now
    // on is seen, not the default action's exit.
    let (installed, ready) = channel();
    let _ = std::thread::Builder::new()
        .name("ps-signals".to_owned())
        .spawn(move || {
            runtime.block_on(async move {
                use tokio::signal::unix::{SignalKind, signal};
                let (Ok(mut int), Ok(mut term)) = (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                ) else {
                    let _ = installed.send(());
                    return;
                };
                let _ = installed.send(());
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                }
                let _ = wake.send(Wake::Stop);
            });
        });
    let _ = ready.recv_timeout(Duration::from_secs(5));
}
