//! Writing `batch merge -o FILE`: replaces FILE atomically with the merged
//! lines, as the only writer of it.
//!
//! The output's lock ([`super::lock`]) is taken first and held until the
//! new file is in place, so a merge never replaces a results file a batch
//! is appending to, and two merges into one file do not interleave. The
//! lines go to a temporary file beside the output, named
//! `.<name>.merge-<pid>.tmp` so that a later merge into the same file can
//! tell one left by a merge that was killed (its pid is gone) and remove it;
//! then it is synced and renamed over the output, and the directory synced:
//! readers see the old file or the whole new one.
//!
//! The temporary file is created `O_EXCL` and never through a link
//! ([`crate::untrusted_file::create_temp`]): its name carries this
//! process's pid, so anything already there (a link planted to make the
//! merge overwrite a file elsewhere) is removed, not written through.
//!
//! It removes nothing but such temporary files of dead merges, and what
//! stands at its own temporary name.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::lock::{lock_results_file, parent_dir, sync_parent_dir};
use super::results::ResultsError;
use crate::untrusted_file::create_temp;

/// What writing the merged file did besides writing it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MergeWritten {
    /// Temporary files of earlier, dead merges into the same output that
    /// were removed.
    pub removed_leftovers: Vec<PathBuf>,
}

/// Replaces `path` with `lines` (each followed by a newline), holding its
/// lock throughout; refuses when another process holds it.
pub fn write_merged(path: &Path, lines: &[Vec<u8>]) -> Result<MergeWritten, ResultsError> {
    let io = |source| ResultsError::Io {
        path: path.to_owned(),
        source,
    };
    let _lock = lock_results_file(path)?;
    let dir = parent_dir(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "merged".to_owned());
    let removed_leftovers = remove_dead_leftovers(&dir, &name);
    let tmp = dir.join(temp_name(&name, std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut file = create_temp(&tmp)?;
        for line in lines {
            file.write_all(line)?;
            file.write_all(b"\n")?;
        }
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        sync_parent_dir(path)
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(MergeWritten { removed_leftovers })
}

/// `.<name>.merge-<pid>.tmp`: the temporary file of merge `pid` into `name`.
pub fn temp_name(name: &str, pid: u32) -> String {
    format!(".{name}.merge-{pid}.tmp")
}

/// The pid in a temporary file name of a merge into `name`, if it is one.
fn temp_owner(file_name: &str, name: &str) -> Option<u32> {
    file_name
        .strip_prefix(&format!(".{name}.merge-"))?
        .strip_suffix(".tmp")?
        .parse()
        .ok()
}

/// Removes the temporary files of merges into `name` whose process is gone;
/// returns them. A live merge's file is its own (it cannot be ours: we hold
/// the lock, so it is not writing), and is left alone.
fn remove_dead_leftovers(dir: &Path, name: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name.to_str().and_then(|f| temp_owner(f, name)) else {
            continue;
        };
        let alive = pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists();
        if !alive && std::fs::remove_file(entry.path()).is_ok() {
            removed.push(entry.path());
        }
    }
    removed.sort();
    removed
}

#[cfg(test)]
#[path = "merge_output_tests.rs"]
mod tests;
