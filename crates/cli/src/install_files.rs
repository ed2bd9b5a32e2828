//! `subagent completions SHELL` and `subagent man --out DIR`: the files an
//! installed CLI ships beside its binaries (shell completion scripts, man
//! pages), generated from the same command tree as `--help`, so they cannot
//! drift from the flags.
//!
//! It only writes what clap_complete and clap_mangen generate; it must not
//! install them anywhere itself (where they go is the packager's or the
//! user's choice, see README's Install).

use std::path::PathBuf;

use crate::exit::Ending;
use anyhow::{Context, Result};
use clap_complete::Shell;

use crate::console;

#[derive(Debug, clap::Args)]
#[command(after_help = "EXAMPLES:\n  \
    subagent completions bash > ~/.local/share/bash-completion/completions/subagent\n  \
    subagent completions zsh > ~/.zfunc/_subagent      # with fpath+=~/.zfunc before compinit\n  \
    subagent completions fish > ~/.config/fish/completions/subagent.fish")]
pub(super) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum, value_name = "SHELL")]
    shell: Shell,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "EXAMPLES:\n  \
    subagent man --out ~/.local/share/man/man1 && man subagent-run\n  \
    subagent man --out man && man -l man/subagent.1")]
pub(super) struct ManArgs {
    /// Directory to write subagent.1 and subagent-<command>.1 into (made if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

/// Prints the completion script of `args.shell` for `tree` (the whole
/// command tree, handed in by `commands`) on stdout.
pub(super) fn completions(args: CompletionsArgs, mut tree: clap::Command) -> Result<Ending> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut tree, "subagent", &mut script);
    let script = String::from_utf8(script).context("the completion script is not UTF-8")?;
    console::out(script.trim_end())?;
    Ok(Ending::Success)
}

/// Writes one man page per command of `tree` into `args.out`; prints their
/// paths.
pub(super) fn man(args: ManArgs, tree: clap::Command) -> Result<Ending> {
    std::fs::create_dir_all(&args.out).with_context(|| {
        format!(
            "cannot make {}: pass --out a directory you can write",
            args.out.display()
        )
    })?;
    clap_mangen::generate_to(tree, &args.out).with_context(|| {
        format!(
            "cannot write the man pages into {}: pass --out a directory you can write",
            args.out.display()
        )
    })?;
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&args.out)
        .with_context(|| format!("cannot list {}", args.out.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| {
            path.extension().is_some_and(|e| e == "1")
                && path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("subagent"))
        })
        .collect();
    pages.sort();
    let listing: Vec<String> = pages.iter().map(|p| p.display().to_string()).collect();
    console::out(&listing.join("\n"))?;
    Ok(Ending::Success)
}
