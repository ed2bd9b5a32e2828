//! `subagent trust [DIR] | --revoke [DIR] | --list`: the operator's word
//! that a project's `.subagent/config.toml` and agent files may configure
//! runs, as they are now (each file's SHA-256 is recorded outside the
//! workspace). The decision and the record live in
//! `subagent_supervisor::config` (`trust.rs`, `trust_store.rs`).
//!
//! Also [`load_project`], the one place the CLI reads a workspace's
//! project files and warns, once per process, about the ones it ignores.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::exit::Ending;
use anyhow::{Context, Result, bail};
use subagent_supervisor::config::{
    ProjectConfig, TrustVerdict, default_trust_file_path, read_project, read_records, write_records,
};
use subagent_supervisor::prepare::{PrepareWarning, workspace_project};

use crate::console;

#[derive(Debug, clap::Args)]
#[command(after_help = "WHAT IS TRUSTED:\n  \
    The project files a run in DIR reads: .subagent/config.toml, .subagent/agents/*.md and\n  \
    .claude/agents/*.md in DIR and each parent up to the repository root. Until they are\n  \
    trusted, and again after any of them changes, appears or goes, runs ignore them all\n  \
    (one warning counts them, --list DIR names them): a tool run in the workspace could\n  \
    have written them.\n  \
    The record is trusted.json in the user's config dir\n  \
    ($XDG_CONFIG_HOME/subagent, default ~/.config/subagent).\n\n\
    EXAMPLES:\n  \
    subagent trust                 # the current directory's project\n  \
    subagent trust ./project\n  \
    subagent trust --list\n  \
    subagent trust --list ./project   # its files that are not trusted, or changed since\n  \
    subagent trust --revoke ./project")]
pub(super) struct TrustArgs {
    /// The workspace whose project files to trust (default: the current directory).
    #[arg(value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Forget the trust of DIR's project instead.
    #[arg(long, conflicts_with = "list")]
    revoke: bool,
    /// List the trusted projects and their files; with DIR, the files of
    /// DIR's project that runs ignore (not trusted, or changed since).
    #[arg(long)]
    list: bool,
}

pub(super) fn run(args: TrustArgs) -> Result<Ending> {
    let Some(store) = default_trust_file_path() else {
        bail!("no place for the trust record: set HOME or XDG_CONFIG_HOME");
    };
    let mut records = read_records(&store)?;
    if args.list {
        if let Some(dir) = args.dir {
            return list_project(&dir, &store);
        }
        let mut text = format!("# trust record {}\n", store.display());
        if records.projects.is_empty() {
            text.push_str("no trusted project");
        }
        for project in &records.projects {
            text.push_str(&format!("{}\n", project.dir.display()));
            for file in &project.files {
                text.push_str(&format!(
                    "  sha256:{}  {}\n",
                    file.sha256,
                    file.path.display()
                ));
            }
        }
        console::out(text.trim_end())?;
        return Ok(Ending::Success);
    }
    let workspace = workspace_or_cwd(args.dir)?;
    let project = read_project(&workspace, Some(&store))?;
    // Never read, so never trusted: said before anything else.
    for file in project.skipped() {
        console::err(&format!("warning: not trusted, not read: {}", file.reason));
    }
    if args.revoke {
        if records.revoke(&project.root) {
            write_records(&store, &records)?;
            console::out(&format!(
                "revoked: runs in {} ignore its project files again",
                project.root.display()
            ))?;
        } else {
            console::out(&format!("{} was not trusted", project.root.display()))?;
        }
        return Ok(Ending::Success);
    }
    if project.files().is_empty() {
        console::out(&format!(
            "nothing to trust: no .subagent/config.toml or agent file from {} up to {}",
            project.workspace.display(),
            project.root.display()
        ))?;
        return Ok(Ending::Success);
    }
    records.trust(&project);
    write_records(&store, &records)?;
    let mut text = format!(
        "trusted {} as it is now (sha256:{}):\n",
        project.root.display(),
        project.combined_hash()
    );
    for file in project.files() {
        text.push_str(&format!(
            "  sha256:{}  {}\n",
            file.sha256,
            project.display_path(&file.path)
        ));
    }
    text.push_str(&format!(
        "a change to any of them needs `{}` again (record: {})",
        project.trust_command(),
        store.display()
    ));
    console::out(&text)?;
    Ok(Ending::Success)
}

/// `trust --list DIR`: DIR's project files that keep it untrusted, one a
/// line, what the one-line warning of a run there counts.
fn list_project(dir: &Path, store: &Path) -> Result<Ending> {
    let project = read_project(dir, Some(store))?;
    let mut text = format!("# project {}\n", project.root.display());
    let changes = project.changes_listing();
    match project.verdict() {
        TrustVerdict::NoFiles => text.push_str("no .subagent/config.toml or agent file"),
        TrustVerdict::Trusted => text.push_str(&format!(
            "trusted: its {} files are as trusted",
            project.files().len()
        )),
        TrustVerdict::Untrusted(_) => {
            text.push_str(&format!(
                "ignored by runs until `{}`:\n",
                project.trust_command()
            ));
            for change in &changes {
                text.push_str(&format!("  {change}\n"));
            }
        }
    }
    for file in project.skipped() {
        text.push_str(&format!("\nnot read: {}", file.reason));
    }
    console::out(text.trim_end())?;
    Ok(Ending::Success)
}

/// `--workspace`, else the current directory.
pub(super) fn workspace_or_cwd(workspace: Option<PathBuf>) -> Result<PathBuf> {
    match workspace {
        Some(dir) => Ok(dir),
        None => std::env::current_dir().context("cannot read the current directory"),
    }
}

/// The project files of `workspace` with their verdict; the warning about
/// ignored ones goes to stderr, once per process (a batch prepares many
/// runs of one workspace).
pub(super) fn load_project(workspace: &Path) -> Result<ProjectConfig> {
    Ok(workspace_project(workspace, &print_warning)?)
}

/// Prints a warning of preparing a run on stderr, each distinct line once
/// per process: a server or batch that prepares every request repeats none.
pub(super) fn print_warning(warning: PrepareWarning) {
    static WARNED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let (PrepareWarning::ProjectIgnored(warning)
    | PrepareWarning::Agent(warning)
    | PrepareWarning::Config(warning)) = warning;
    let first = WARNED
        .lock()
        .map_or(true, |mut warned| warned.insert(warning.clone()));
    if first {
        console::err(&warning);
    }
}
