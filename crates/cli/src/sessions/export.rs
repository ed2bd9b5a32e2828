//! `subagent sessions export --html RUN_ID [-o FILE]`: one run as a single
//! self-contained HTML page. Flags in, a file (or stdout) out; the page
//! itself is built by `subagent_supervisor::session::html`.
//!
//! Writes only the file `-o` names, and that atomically (a temporary file
//! beside it, then a rename): a reader never sees half a page, and a failed
//! export leaves an older page in place.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::exit::Ending;
use anyhow::{Context, Result, bail};
use subagent_supervisor::session::html::render_page;
use subagent_supervisor::session::read::{ReadError, find_session, read_session, summarize};

use crate::console;

#[derive(Debug, clap::Args)]
pub(super) struct ExportArgs {
    /// Export as one self-contained HTML page (the only format so far).
    #[arg(long, required = true)]
    html: bool,
    /// Where to write the page; `-` (the default) is stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// A run id (or unique prefix) under the sessions dir, or a session file.
    #[arg(value_name = "RUN_ID|FILE")]
    run: String,
}

/// The `after_help` of `sessions export`.
pub(super) const EXPORT_HELP: &str = "EXAMPLES:\n  \
    # one run as a page to open in a browser or attach to a bug report\n  \
    subagent sessions export --html 3f9c2a -o run-3f9c2a.html\n\n  \
    # to stdout\n  \
    subagent sessions export --html 3f9c2a > run.html\n\n\
    The page needs nothing else: styles and the usage chart (inline SVG) are in it, \
    it runs no script and loads nothing. It shows the header (agent, model, limits, \
    which protections were and were not applied), each turn with the assistant text, \
    tool calls and results (long ones folded), limit hits, warnings and errors, \
    and how the run ended. Session text is escaped, never interpreted.";

/// Exports one run; returns the exit code.
pub(super) fn run(dir: &Path, args: ExportArgs) -> Result<Ending> {
    debug_assert!(args.html, "clap requires --html");
    let path = find_session(dir, &args.run).map_err(|e| match e {
        ReadError::NotFound { .. } => anyhow::anyhow!(
            "{e}\n  `subagent sessions ls` lists the runs there; pass a run id or prefix \
             from it, a session file's path, or --sessions-dir DIR for another sessions dir"
        ),
        other => other.into(),
    })?;
    let items = read_session(&path)?;
    let summary = summarize(&path, &items);
    let page = render_page(&items, summary.as_ref());
    match args.output.as_deref() {
        None => console::out(page.trim_end_matches('\n'))?,
        Some(out) if out == Path::new("-") => console::out(page.trim_end_matches('\n'))?,
        Some(out) => {
            write_atomically(out, page.as_bytes())?;
            console::err(&format!(
                "wrote {} ({} bytes) from {}",
                out.display(),
                page.len(),
                path.display()
            ));
        }
    }
    Ok(Ending::Success)
}

/// Writes `bytes` to a temporary file beside `target`, syncs it and
/// renames it over `target`: the rename is atomic within a file system,
/// which "beside" guarantees.
fn write_atomically(target: &Path, bytes: &[u8]) -> Result<()> {
    let Some(name) = target.file_name() else {
        bail!("-o {}: not a file name", target.display());
    };
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = dir.join(tmp_name);
    // Created new, never through a link planted at the name.
    let written = subagent_supervisor::untrusted_file::create_temp(&tmp)
        .map_err(std::io::Error::from)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, target));
    if let Err(e) = written {
        // Best effort: the temporary file is ours and worthless now.
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("write {}", target.display()));
    }
    Ok(())
}
