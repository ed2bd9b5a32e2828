//! One writer per results file: the exclusive `flock` that `batch` holds on
//! its results file for as long as it appends, and that `batch merge -o`
//! takes on its output before it replaces it.
//!
//! Two writers would lose results: a merge that renames a new file over one
//! a batch appends to sends the batch's next results to the unlinked old
//! file, and the resume runs those tasks again. So a held file is refused,
//! naming the process that holds it (read from `/proc/locks`), and a lock
//! taken on a file that a merge renamed over meanwhile is dropped and taken
//! again on the file the path now names.
//!
//! The file is opened as one read back ([`crate::untrusted_file`]): a link
//! or a FIFO at its name is refused, never followed or waited on, and the
//! lock comes with the file's identity, which the writer checks before
//! each append.
//!
//! It never waits for a lock and never breaks one.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use super::results_error::ResultsError;
use crate::untrusted_file::{FileIdentity, open_append};

/// The results file, locked, and which file it is.
#[derive(Debug)]
pub struct LockedResults {
    /// Open for reading and appending; unlocked when dropped.
    pub file: Flock<File>,
    /// Its device and inode, to tell whether the path still names it.
    pub identity: FileIdentity,
}

/// Attempts at locking the file the path names when merges keep renaming
/// new files over it; more than a couple means something renames in a loop.
const LOCK_ATTEMPTS: usize = 8;

/// Opens `path` for reading and appending (creating it when missing, and
/// syncing its directory then, so the entry survives a crash) and takes
/// its exclusive lock without waiting. Refuses a file another process
/// holds, naming it; and a link, a FIFO or anything but a regular file.
pub fn lock_results_file(path: &Path) -> Result<LockedResults, ResultsError> {
    let io = |source| ResultsError::Io {
        path: path.to_owned(),
        source,
    };
    for _ in 0..LOCK_ATTEMPTS {
        let opened = open_append(path)?;
        if opened.created {
            sync_parent_dir(path).map_err(io)?;
        }
        let locked = match Flock::lock(opened.file, FlockArg::LockExclusiveNonblock) {
            Ok(locked) => locked,
            Err((file, Errno::EWOULDBLOCK)) => {
                return Err(ResultsError::Locked {
                    path: path.to_owned(),
                    holder: holder_of(&file),
                });
            }
            Err((_, errno)) => return Err(io(errno.into())),
        };
        // A merge may have renamed a new file over the path between our
        // open and our lock: the lock is then on a file nobody will read.
        if opened.identity.still_named_by(path).map_err(io)? {
            return Ok(LockedResults {
                file: locked,
                identity: opened.identity,
            });
        }
    }
    Err(io(std::io::Error::other(
        "the file keeps being replaced while it is opened; stop whatever renames files over it",
    )))
}

pub(super) fn sync_parent_dir(path: &Path) -> std::io::Result<()> {
    File::open(parent_dir(path))?.sync_all()
}

/// The directory `path` is in (`.` for a bare name).
pub(super) fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    }
}

/// Who holds `file`'s lock, for the refusal: `pid N (its command line)`.
fn holder_of(file: &File) -> Option<String> {
    let meta = file.metadata().ok()?;
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let dev = meta.dev();
    let (major, minor) = (nix::sys::stat::major(dev), nix::sys::stat::minor(dev));
    let pid = flock_holder(&locks, major, minor, meta.ino())?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<String> = cmdline
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    Some(if words.is_empty() {
        format!("pid {pid}")
    } else {
        let program = Path::new(&words[0])
            .file_name()
            .map_or_else(|| words[0].clone(), |n| n.to_string_lossy().into_owned());
        let mut shown = std::iter::once(program)
            .chain(words[1..].iter().cloned())
            .collect::<Vec<_>>()
            .join(" ");
        if shown.chars().count() > 80 {
            shown = shown.chars().take(79).collect::<String>() + "…";
        }
        format!("pid {pid} ({shown})")
    })
}

/// The pid holding a granted `FLOCK` on the file `major:minor:inode`, from
/// the text of `/proc/locks` (`1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0
/// EOF`; device numbers in hex; `->` lines are waiters, not holders).
pub(super) fn flock_holder(proc_locks: &str, major: u64, minor: u64, inode: u64) -> Option<u32> {
    let wanted = format!("{major:02x}:{minor:02x}:{inode}");
    proc_locks.lines().find_map(|line| {
        let mut fields = line.split_whitespace().skip(1);
        let kind = fields.next()?;
        if kind != "FLOCK" {
            return None;
        }
        let (_advisory, _mode, pid, file) = (
            fields.next()?,
            fields.next()?,
            fields.next()?,
            fields.next()?,
        );
        (file == wanted).then(|| pid.parse().ok()).flatten()
    })
}

#[cfg(test)]
#[path = "lock_tests.rs"]
mod tests;
