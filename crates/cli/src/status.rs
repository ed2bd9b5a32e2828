//! What `subagent run` shows on stderr while it runs: the live status line
//! (one spinner line per running child: agent, turn, tool, the model's
//! task list, tokens, cost, elapsed) and the operator's logs (`tracing`, filtered by `RUST_LOG`).
//!
//! The status line exists only when stderr is a terminal and `--quiet` is
//! off: piped, it writes nothing at all, not even an escape code. It is
//! cleared before the result is printed, so the answer lands on a clean
//! screen. Nothing here writes to stdout, which carries only the answer.
//!
//! Everything on the status line passes through
//! [`strip_controls`]: a tool or agent name is chosen by a model or a file,
//! and must not reach the terminal as an escape sequence.
//!
//! The supervisor calls the progress sink inline in a child's watch loop,
//! so the sink only queues the event on a channel; a thread of its own
//! draws, and a stalled terminal can hold up only that thread.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use subagent_protocol::text::prefix_chars;
use subagent_supervisor::run::{
    ChildProgress, ContentSink, ProgressEvent, ProgressSink, streamed_chars,
};
use subagent_supervisor::terminal_text::strip_controls;

/// How often the spinner turns and the elapsed time is redrawn (100 ms):
/// smooth to the eye, cheap for the terminal.
const TICK: Duration = Duration::from_millis(100);

/// The log filter when `RUST_LOG` is unset: warnings and errors only, so a
/// normal run's stderr stays the result's own lines.
const DEFAULT_LOG_FILTER: &str = "warn";

/// The bars on screen now, for log lines to be printed above them rather
/// than through them. `None` when there is no status line.
static ACTIVE_BARS: Mutex<Option<MultiProgress>> = Mutex::new(None);

/// Sends `tracing` events to stderr, filtered by `RUST_LOG` (default
/// `warn`; e.g. `RUST_LOG=subagent_supervisor=debug`). Never to stdout.
pub(super) fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER));
    // A second init (there is none in the binary) would keep the first one.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(|| LogLine(Vec::new()))
        .try_init();
}

/// One formatted log line, written to stderr in one piece when dropped,
/// above the status line when one is showing.
struct LogLine(Vec<u8>);

impl Write for LogLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        let write = || {
            // A stderr nobody reads is ignored: there is nowhere to say so.
            let _ = std::io::stderr().lock().write_all(&self.0);
        };
        let bars = ACTIVE_BARS.lock().ok().and_then(|b| b.clone());
        match bars {
            Some(bars) => bars.suspend(write),
            None => write(),
        }
    }
}

/// Bars on stderr that log lines are printed above rather than through,
/// for a command drawing its own (batch's progress bar): add bars to it.
pub(super) fn bars_under_logs() -> MultiProgress {
    let bars = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
    if let Ok(mut active) = ACTIVE_BARS.lock() {
        *active = Some(bars.clone());
    }
    bars
}

/// The status line of one `subagent run`: `None` inside when hidden. The
/// drawer gets `Some(event)` per event and `None` to clear and stop.
pub(super) struct StatusLine {
    drawing: Option<(Sender<Option<Update>>, JoinHandle<()>)>,
}

/// What the drawer is told: a progress event, or how many characters a
/// child streamed (its text never reaches the drawer, only the count).
#[derive(Debug, Clone)]
enum Update {
    Progress(ProgressEvent),
    Streamed { run_id: String, chars: u64 },
}

impl StatusLine {
    /// A status line on stderr when it is a terminal and `quiet` is off;
    /// otherwise one that shows nothing.
    pub(super) fn start(quiet: bool) -> Self {
        if quiet || !std::io::stderr().is_terminal() {
            return Self { drawing: None };
        }
        let (events, inbox) = channel();
        let drawer = std::thread::Builder::new()
            .name("status-line".into())
            .spawn(move || draw(&inbox));
        // Without its thread the run simply has no status line.
        Self {
            drawing: drawer.ok().map(|handle| (events, handle)),
        }
    }

    /// The sink for `SupervisorConfig::progress`; `None` when hidden.
    pub(super) fn sink(&self) -> Option<ProgressSink> {
        let (events, _) = self.drawing.as_ref()?;
        let events = events.clone();
        Some(ProgressSink::new(move |event| {
            // The drawer gone (after `finish`) is no error: nothing to show.
            let _ = events.send(Some(Update::Progress(event.clone())));
        }))
    }

    /// The sink for `SupervisorConfig::content`, so the line counts the
    /// output a turn streams before its usage arrives; `None` when hidden.
    pub(super) fn content_sink(&self) -> Option<ContentSink> {
        let (events, _) = self.drawing.as_ref()?;
        let events = events.clone();
        Some(ContentSink::new(move |event| {
            let chars = streamed_chars(event);
            if chars > 0 {
                let _ = events.send(Some(Update::Streamed {
                    run_id: event.run_id().to_owned(),
                    chars,
                }));
            }
        }))
    }

    /// Clears every line and waits until the screen is clean, so what is
    /// printed next starts on a line of its own.
    pub(super) fn finish(self) {
        if let Some((events, drawer)) = self.drawing {
            // A stop message rather than the senders' drop: a sink may still
            // be held somewhere (a config clone), and the drawer must end.
            let _ = events.send(None);
            let _ = drawer.join();
        }
    }
}

/// The drawing thread: one bar per running child, until told to stop (or
/// every sender is gone); then the screen is cleared.
fn draw(inbox: &Receiver<Option<Update>>) {
    let bars = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
    if let Ok(mut active) = ACTIVE_BARS.lock() {
        *active = Some(bars.clone());
    }
    let mut running: HashMap<String, (ProgressBar, RunStatus)> = HashMap::new();
    for update in inbox.iter().map_while(|update| update) {
        let event = match update {
            Update::Progress(event) => event,
            Update::Streamed { run_id, chars } => {
                if let Some((bar, status)) = running.get_mut(&run_id) {
                    status.progress.tokens.on_streamed(chars);
                    bar.set_message(status.line());
                }
                continue;
            }
        };
        match event {
            ProgressEvent::Started { run_id, agent, .. } => {
                let bar = bars.add(ProgressBar::new_spinner().with_style(style()));
                let status = RunStatus::new(agent);
                bar.set_message(status.line());
                bar.enable_steady_tick(TICK);
                running.insert(run_id, (bar, status));
            }
            ProgressEvent::Ended { run_id, .. } => {
                if let Some((bar, status)) = running.remove(&run_id) {
                    bar.finish_and_clear();
                    bars.remove(&bar);
                    // The line goes; a cut answer must not go unnoticed.
                    if let Some(note) = status.cut_note() {
                        let _ = bars.println(note);
                    }
                }
            }
            event => {
                if let Some((bar, status)) = running.get_mut(event.run_id()) {
                    status.apply(event);
                    bar.set_message(status.line());
                }
            }
        }
    }
    for (_, (bar, _)) in running {
        bar.finish_and_clear();
    }
    let _ = bars.clear();
    if let Ok(mut active) = ACTIVE_BARS.lock() {
        *active = None;
    }
}

fn style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {msg} · {elapsed_short}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
        .with_key(
            "elapsed_short",
            |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&elapsed(state.elapsed()));
            },
        )
}

/// What the status line knows of one child: its figures as every live
/// display counts them ([`ChildProgress`]), and its agent and tool.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RunStatus {
    agent: String,
    tool: Option<Tool>,
    /// The model's task list: `tasks 1/3: Running the tests`, made safe
    /// when the list changed; `None` until it writes one.
    todos: Option<String>,
    /// Turn (0 until the first starts), tokens and cost.
    progress: ChildProgress,
}

/// The tool running now, or the last one and how it went.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tool {
    Running(String),
    Done(String),
    Failed(String),
}

impl RunStatus {
    pub(super) fn new(agent: String) -> Self {
        Self {
            agent,
            tool: None,
            todos: None,
            progress: ChildProgress::default(),
        }
    }

    /// Takes in one event of this child.
    pub(super) fn apply(&mut self, event: ProgressEvent) {
        self.progress.observe(&event);
        match event {
            ProgressEvent::ToolStarted { name, .. } => self.tool = Some(Tool::Running(name)),
            ProgressEvent::ToolFinished { name, is_error, .. } => {
                self.tool = Some(if is_error {
                    Tool::Failed(name)
                } else {
                    Tool::Done(name)
                });
            }
            ProgressEvent::Todos {
                done,
                total,
                active,
                ..
            } => self.todos = Some(todos_text(done, total, active.as_deref())),
            // A line is drawn from `Started` on: a queued run has none yet.
            ProgressEvent::Queued { .. }
            | ProgressEvent::LeftQueue { .. }
            | ProgressEvent::Started { .. }
            | ProgressEvent::Ended { .. }
            | ProgressEvent::Turn { .. }
            | ProgressEvent::Usage { .. } => {}
        }
    }

    /// `general · turn 2 · bash_read · 1,200 in / 34 out tok · $0.0012`
    /// (the spinner and the elapsed time are added when drawn; tokens as
    /// [`LiveTokens::text`] gives them, `~` marking an estimate of a turn
    /// still streaming, `cut at max_tokens` once a turn was cut). The cost
    /// is left out while it is 0: that is what unknown and local models
    /// report.
    /// What is left on screen when a child whose turn was cut by the
    /// output cap ends: its answer is incomplete.
    pub(super) fn cut_note(&self) -> Option<String> {
        self.progress.tokens.cut_by_max_tokens.then(|| {
            strip_controls(&format!(
                "note: {}: a model turn was cut by max_tokens (the output cap); \
                 the answer may be incomplete",
                self.agent
            ))
            .replace(['\n', '\t'], " ")
        })
    }

    pub(super) fn line(&self) -> String {
        let mut parts = vec![self.agent.clone()];
        parts.push(match self.progress.turn {
            0 => "starting".to_owned(),
            n => format!("turn {n}"),
        });
        match &self.tool {
            Some(Tool::Running(name)) => parts.push(name.clone()),
            Some(Tool::Done(name)) => parts.push(format!("{name} done")),
            Some(Tool::Failed(name)) => parts.push(format!("{name} failed")),
            None => {}
        }
        if let Some(todos) = &self.todos {
            parts.push(todos.clone());
        }
        parts.push(self.progress.tokens.text());
        if self.progress.tokens.cut_by_max_tokens {
            parts.push("cut at max_tokens".to_owned());
        }
        if self.progress.cost > 0.0 {
            parts.push(dollars(self.progress.cost));
        }
        // Agent and tool names are the model's or a file's choice: on a
        // terminal they are text, never sequences, and one line.
        strip_controls(&parts.join(" · ")).replace(['\n', '\t'], " ")
    }
}

/// Characters of the task in progress the status line shows: the line
/// must stay one line on a terminal however long the model's text is.
const ACTIVE_TODO_CHARS: usize = 48;

/// `tasks 1/3: Running the tests`: items done of all, and what the item in
/// progress says it is doing, cut to [`ACTIVE_TODO_CHARS`]. The text is the
/// model's: its escape sequences are stripped here, alone, since one left
/// unterminated would swallow the rest of the line if stripped with it.
pub(super) fn todos_text(done: usize, total: usize, active: Option<&str>) -> String {
    let counts = format!("tasks {done}/{total}");
    let Some(active) = active else {
        return counts;
    };
    let safe = strip_controls(active);
    let one_line = safe.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.is_empty() {
        return counts;
    }
    let shown = prefix_chars(&one_line, ACTIVE_TODO_CHARS);
    let more = if shown.len() < one_line.len() {
        "…"
    } else {
        ""
    };
    format!("{counts}: {shown}{more}")
}

/// Dollars: four decimals under a dollar (a turn of a small model costs
/// fractions of a cent), two from there on.
pub(super) fn dollars(cost: f64) -> String {
    if cost < 1.0 {
        format!("${cost:.4}")
    } else {
        format!("${cost:.2}")
    }
}

/// `3.4s`, `2m05s`, `1h02m`: short enough for a status line.
pub(super) fn elapsed(d: Duration) -> String {
    let secs = d.as_secs();
    if secs < 60 {
        format!("{}.{}s", secs, d.subsec_millis() / 100)
    } else if secs < 3600 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60)
    }
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
