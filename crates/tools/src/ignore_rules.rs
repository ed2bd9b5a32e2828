//! The ignore rules of a walk (`.ignore`, `.gitignore`, `.git/info/exclude`),
//! read safely and matched as ripgrep matches them.
//!
//! The `ignore` crate's walker opens these files by path and reads them
//! whole: a `.gitignore` symlinked to a file outside the workspace became
//! rules (telling the model which outside paths exist), a FIFO `.gitignore`
//! hung the walk and `.ignore -> /dev/zero` filled memory. Here each one is
//! opened beneath its directory's fd ([`crate::beneath`]), read only when it
//! is a regular file, and only up to [`IGNORE_FILE_MAX_BYTES`]; the rules are
//! fed to `ignore::gitignore::GitignoreBuilder` line by line. A file that is
//! skipped is noted, so the tool result can say why a rule was not applied.
//!
//! A `.git` *file* (a worktree's or submodule's pointer to a git dir
//! elsewhere) is never followed: the git dir may be outside the workspace.
//!
//! This module must not open anything by path, and never reads more than
//! the cap from one file.

use std::ffi::OsStr;
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::path::Path;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::beneath;

/// Largest ignore file read, bytes. Real ones are a few KiB; a bigger one is
/// skipped whole (half a rule list could un-ignore what the rest ignores).
pub const IGNORE_FILE_MAX_BYTES: u64 = 1024 * 1024;

/// Names of skipped ignore files kept for the note; the rest are counted.
const NOTED_FILES: usize = 5;

/// The three kinds of ignore file, in ripgrep's precedence: a `.ignore` rule
/// anywhere wins over a `.gitignore` rule, which wins over `info/exclude`.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Ignore,
    Gitignore,
    Exclude,
}

const KINDS: [Kind; 3] = [Kind::Ignore, Kind::Gitignore, Kind::Exclude];

/// The rules one directory adds.
#[derive(Debug, Default)]
struct DirectoryRules {
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    exclude: Option<Gitignore>,
}

impl DirectoryRules {
    fn get(&self, kind: Kind) -> Option<&Gitignore> {
        match kind {
            Kind::Ignore => self.ignore.as_ref(),
            Kind::Gitignore => self.gitignore.as_ref(),
            Kind::Exclude => self.exclude.as_ref(),
        }
    }
}

/// The rules of the directories from the walk's top down to the current one.
#[derive(Debug, Default)]
pub(crate) struct RuleStack {
    levels: Vec<DirectoryRules>,
    /// Ignore files that were not read, as `path (why)`.
    skipped: Vec<String>,
    skipped_count: usize,
}

impl RuleStack {
    /// Depth, to [`RuleStack::truncate`] back to when leaving a directory.
    pub(crate) fn depth(&self) -> usize {
        self.levels.len()
    }

    /// Forgets the rules of directories deeper than `depth`.
    pub(crate) fn truncate(&mut self, depth: usize) {
        self.levels.truncate(depth);
    }

    /// Forgets every rule (a walk that starts in a directory the rules
    /// above it hide).
    pub(crate) fn clear(&mut self) {
        self.levels.clear();
    }

    /// Reads the ignore files of the directory `dir`, at `path` (absolute,
    /// used for matching and naming only; `shown` is its root-relative form).
    pub(crate) fn enter(&mut self, dir: impl AsFd, path: &Path, shown: &Path) {
        let dir = dir.as_fd();
        let mut rules = DirectoryRules {
            ignore: self.read_rules(dir, OsStr::new(".ignore"), path, shown),
            gitignore: self.read_rules(dir, OsStr::new(".gitignore"), path, shown),
            exclude: None,
        };
        // `.git/info/exclude`, through real directories only: a `.git` file
        // or symlink is not followed.
        if let Ok(git) = beneath::open_directory(dir, OsStr::new(".git"))
            && let Ok(info) = beneath::open_directory(&git, OsStr::new("info"))
        {
            rules.exclude =
                self.read_rules(&info, OsStr::new("exclude"), path, &shown.join(".git/info"));
        }
        self.levels.push(rules);
    }

    /// Whether `path` (absolute, below every level's directory) is ignored,
    /// whitelisted (`!rule`) or neither: the deepest rule of the strongest
    /// kind decides.
    pub(crate) fn matched(&self, path: &Path, is_dir: bool) -> Match<()> {
        for kind in KINDS {
            for level in self.levels.iter().rev() {
                let Some(rules) = level.get(kind) else {
                    continue;
                };
                match rules.matched(path, is_dir) {
                    Match::None => {}
                    Match::Ignore(_) => return Match::Ignore(()),
                    Match::Whitelist(_) => return Match::Whitelist(()),
                }
            }
        }
        Match::None
    }

    /// One line for the tool result when an ignore file was skipped.
    pub(crate) fn skipped_note(&self) -> Option<String> {
        if self.skipped_count == 0 {
            return None;
        }
        let more = self.skipped_count - self.skipped.len();
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        Some(format!(
            "(ignore files not applied: {}{more}; only regular files inside the workspace of at most {} KiB are read)\n",
            self.skipped.join(", "),
            IGNORE_FILE_MAX_BYTES / 1024
        ))
    }

    fn read_rules(
        &mut self,
        dir: impl AsFd,
        name: &OsStr,
        path: &Path,
        shown: &Path,
    ) -> Option<Gitignore> {
        let shown = shown.join(name);
        let bytes = match read_ignore_file(dir, name) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return None,
            Err(why) => {
                self.note(&shown, &why);
                return None;
            }
        };
        let mut builder = GitignoreBuilder::new(path);
        for line in String::from_utf8_lossy(&bytes).lines() {
            // A bad glob is skipped, as git and ripgrep skip it; the rest stand.
            let _ = builder.add_line(Some(path.join(name)), line);
        }
        builder.build().ok()
    }

    fn note(&mut self, shown: &Path, why: &str) {
        self.skipped_count += 1;
        if self.skipped.len() < NOTED_FILES {
            self.skipped.push(format!("`{}` ({why})", shown.display()));
        }
    }
}

/// The contents of ignore file `name` in `dir`: `Ok(None)` when there is
/// none, `Err(why)` when there is one that is not read.
fn read_ignore_file(dir: impl AsFd, name: &OsStr) -> Result<Option<Vec<u8>>, String> {
    let file = match beneath::open_file(dir, name) {
        Ok(Ok(file)) => file,
        Ok(Err(None)) => return Err("a directory".into()),
        Ok(Err(Some(kind))) => return Err(kind.describe().into()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        // RESOLVE_NO_SYMLINKS / O_NOFOLLOW: the name is a symlink.
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err("a symlink".into()),
        Err(e) => return Err(format!("unreadable: {e}")),
    };
    let mut bytes = Vec::new();
    // One byte over the cap tells "exactly the cap" from "more".
    match file.take(IGNORE_FILE_MAX_BYTES + 1).read_to_end(&mut bytes) {
        Ok(_) if bytes.len() as u64 > IGNORE_FILE_MAX_BYTES => {
            Err(format!("larger than {} KiB", IGNORE_FILE_MAX_BYTES / 1024))
        }
        Ok(_) => Ok(Some(bytes)),
        Err(e) => Err(format!("unreadable: {e}")),
    }
}
