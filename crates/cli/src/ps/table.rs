//! The `subagent ps` table: one row per live run (run id, parent, agent,
//! state and for how long, silence, turns, tokens, cost, worker pid), and
//! a line saying how many files of `.live/` were not believed.
//!
//! Strings out; it writes nothing. Names in a record were chosen by a
//! model or a file (a tool name, an agent name): on a terminal they are
//! stripped of control sequences.

use subagent_supervisor::live::{LiveEntry, LiveListing, LiveState};
use subagent_supervisor::run::thousands;
use subagent_supervisor::session::display::format_duration;
use subagent_supervisor::session::run_ids::abbreviate;
use subagent_supervisor::terminal_text::strip_controls;

const HEADERS: [&str; 10] = [
    "RUN",
    "PARENT",
    "AGENT",
    "STATE",
    "FOR",
    "SILENT",
    "TURNS",
    "TOKENS IN/OUT",
    "COST",
    "PID",
];

/// The table of `listing`; `terminal` when it goes to one.
pub(super) fn table(listing: &LiveListing, terminal: bool) -> String {
    let shown = |text: &str| {
        if terminal {
            strip_controls(text).into_owned()
        } else {
            text.to_owned()
        }
    };
    let ids: Vec<&str> = listing.runs.iter().map(|r| r.run_id.as_str()).collect();
    let parents: Vec<&str> = listing
        .runs
        .iter()
        .filter_map(|r| r.parent_run_id.as_deref())
        .collect();
    let all: Vec<&str> = ids.iter().chain(&parents).copied().collect();
    let short = abbreviate(&ids, &all);
    let rows: Vec<[String; 10]> = listing
        .runs
        .iter()
        .zip(short)
        .map(|(run, id)| {
            let parent = run.parent_run_id.as_deref().map_or_else(
                || "-".to_owned(),
                |p| abbreviate(&[p], &all).pop().unwrap_or_default(),
            );
            [
                id,
                shown(&parent),
                shown(&run.agent),
                shown(&state_text(run)),
                format_duration(run.state_ms),
                silence(run),
                run.turns.to_string(),
                format!(
                    "{}/{}",
                    thousands(run.input_tokens),
                    thousands(run.output_tokens)
                ),
                format!("${:.4}", run.cost),
                run.pid.map_or_else(|| "-".to_owned(), |p| p.to_string()),
            ]
        })
        .collect();
    let mut widths = HEADERS.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    let mut out = line(&HEADERS.map(str::to_owned));
    for row in &rows {
        out.push('\n');
        out.push_str(&line(row));
    }
    if rows.is_empty() {
        out.push_str("\n(no live runs)");
    }
    if listing.not_believed > 0 {
        out.push_str(&format!(
            "\n{} file(s) in .live/ not believed: not sealed under this user's session key, or \
             held by another process than the one they name (planted or copied there?)",
            listing.not_believed
        ));
    }
    out
}

/// `waiting for the model`, `running tool bash_read`, ...
pub(super) fn state_text(run: &LiveEntry) -> String {
    match (&run.state, &run.tool) {
        (LiveState::RunningTool, Some(tool)) => format!("running tool {tool}"),
        (state, _) => state.words().to_owned(),
    }
}

/// How long the worker has said nothing, `!` after it when past the
/// threshold.
fn silence(run: &LiveEntry) -> String {
    let text = format_duration(run.silent_ms);
    if run.silent {
        format!("{text} !")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, parent: Option<&str>) -> LiveEntry {
        LiveEntry {
            run_id: id.into(),
            parent_run_id: parent.map(Into::into),
            agent: "gen\x1b[2Jeral".into(),
            model: "m".into(),
            state: LiveState::RunningTool,
            tool: Some("bash_read".into()),
            state_ms: 1_500,
            silent_ms: 75_000,
            silent: true,
            turns: 3,
            input_tokens: 12_345,
            cached_input_tokens: 0,
            output_tokens: 67,
            cost: 0.5,
            pid: Some(4242),
            supervisor_pid: 1,
            started_at: "2026-11-28T12:00:00.000Z".into(),
            elapsed_ms: 9_000,
            session_file: None,
        }
    }

    #[test]
    fn a_row_says_what_the_run_does_and_strips_escapes_on_a_terminal() {
        let listing = LiveListing {
            runs: vec![
                entry("0190aaaa11111111", None),
                entry("0190bbbb22222222", Some("0190aaaa11111111")),
            ],
            ..LiveListing::default()
        };
        let text = table(&listing, true);
        assert!(text.contains("running tool bash_read"), "{text}");
        assert!(text.contains("1m15s !"), "{text}");
        assert!(text.contains("12,345/67"), "{text}");
        assert!(text.contains("0190aaaa  general"), "{text}");
        assert!(!text.contains('\x1b'), "{text}");
    }

    #[test]
    fn no_runs_and_unbelieved_files_are_said() {
        let listing = LiveListing {
            not_believed: 2,
            ..LiveListing::default()
        };
        let text = table(&listing, false);
        assert!(text.contains("(no live runs)"));
        assert!(text.contains("2 file(s) in .live/ not believed"));
    }
}
