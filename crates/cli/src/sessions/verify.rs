//! `subagent sessions verify`: whether a session file is as subagent wrote
//! it (its chain holds under this user's key), or the first line that is
//! not. The check is `subagent_supervisor::session::verified`'s; this
//! command only reports it, and never changes or re-signs a file.

use std::path::Path;

use crate::exit::Ending;
use anyhow::Result;
use subagent_supervisor::session::read::find_session;
use subagent_supervisor::session::verified::{VerifyError, read_verified};

use crate::console;

/// The long help's examples and exit status.
pub(super) const VERIFY_HELP: &str = "EXAMPLES:\n  \
    subagent sessions verify 3f9c2a\n  \
    subagent sessions verify ./3f9c2a1b-general.jsonl\n\n\
    Every line subagent writes carries a chain value: a MAC, under the key in the \
    user's config dir (session.key), of the line and the one before it. A line \
    changed, inserted, removed or reordered, a file written with another user's key \
    or before files were chained, breaks it at that line. A last line cut short by \
    a crash is reported, not counted against the file. `run --resume`, `sessions \
    replay`, batch re-runs and serve recovery refuse a file that does not verify.\n\n\
    OUTPUT:\n  verified: 14 lines, the chain holds (FILE)\n  \
    FILE: line 3 does not match its chain value: ...\n\n\
    EXIT STATUS:\n  0 the file verifies, 10 it does not (the first bad line is named),\n  \
    2 there is no such run or file";

#[derive(Debug, clap::Args)]
pub(super) struct VerifyArgs {
    /// A run id (or unique prefix) under the sessions dir, or a session file.
    #[arg(value_name = "RUN_ID|FILE")]
    run: String,
}

/// Verifies one file; the exit code says whether it holds.
pub(super) fn run(sessions_dir: &Path, args: &VerifyArgs) -> Result<Ending> {
    let path = find_session(sessions_dir, &args.run)?;
    let file = match read_verified(&path) {
        Ok(file) => file,
        Err(e @ (VerifyError::Broken { .. } | VerifyError::Empty { .. })) => {
            console::err(&e.to_string());
            return Ok(Ending::SessionUnverified);
        }
        Err(e) => return Err(e.into()),
    };
    let verified = &file.verified;
    console::out(&format!(
        "verified: {} lines, the chain holds ({})",
        verified.lines,
        path.display()
    ))?;
    if let Some((line_no, bytes)) = verified.torn_tail {
        console::out(&format!(
            "line {line_no} ({bytes} bytes, no newline) was cut short by a crash: nothing \
             vouches for it, and readers drop it"
        ))?;
    }
    for line_no in &verified.covered {
        console::out(&format!(
            "line {line_no} was cut short by a crash and ended by the recovery that appended \
             the line after it"
        ))?;
    }
    Ok(Ending::Success)
}
