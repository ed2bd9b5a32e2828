//! Spare record files: when a run ends, its record file is renamed to a
//! spare name (`.spare.<pid>.<n>`) and kept, open and locked by this
//! process, for the next run under the same `.live/`, instead of being
//! unlinked and a new one created.
//!
//! Why: creating a file costs an inode, and ext4's allocator, under the
//! churn of thousands of short runs, spends more on it than on the rest of
//! a record's life (BENCHMARKS.md, `live.record_per_run`). Renames do not
//! allocate.
//!
//! Bounded: at most [`MAX_SPARES`] files are kept. A spare never has a run
//! id's name, so `subagent ps` never lists one; a dead process's spares
//! are held by nobody and `ps` removes them. It never writes a record
//! (the writer does) and never opens a file.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::untrusted_file::FileIdentity;

/// The start of every spare's name.
pub const SPARE_PREFIX: &str = ".spare.";

/// Spares kept at most, all `.live/` dirs together: a run's start takes
/// one, its end gives one back, so this many cover that many runs ending
/// between two starts.
const MAX_SPARES: usize = 64;

/// A record file no run uses now, still open and locked.
#[derive(Debug)]
pub(super) struct Spare {
    /// The `.live/` dir it lies in.
    pub dir: PathBuf,
    /// Its name there now.
    pub path: PathBuf,
    /// Open for writing, locked.
    pub file: File,
}

static SPARES: Mutex<Vec<Spare>> = Mutex::new(Vec::new());

/// A spare in `dir`, if one is kept and its name still names it (else it
/// is dropped: something replaced it).
pub(super) fn take(dir: &Path) -> Option<Spare> {
    let spare = {
        let mut spares = SPARES.lock().unwrap_or_else(PoisonError::into_inner);
        let at = spares.iter().position(|s| s.dir == dir)?;
        spares.swap_remove(at)
    };
    let same = FileIdentity::of(&spare.file)
        .ok()
        .zip(FileIdentity::at(&spare.path).ok().flatten())
        .is_some_and(|(open, named)| open == named);
    same.then_some(spare)
}

/// Keeps `file`, a record file at `path` in `dir`, as a spare: renamed to
/// a spare name. `Err` gives it back when it is not kept (enough spares,
/// or the rename failed): the caller removes it.
pub(super) fn keep(dir: &Path, path: &Path, file: File) -> Result<(), File> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut spares = SPARES.lock().unwrap_or_else(PoisonError::into_inner);
    if spares.len() >= MAX_SPARES {
        return Err(file);
    }
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let spare = dir.join(format!("{SPARE_PREFIX}{}.{n}", std::process::id()));
    if std::fs::rename(path, &spare).is_err() {
        return Err(file);
    }
    spares.push(Spare {
        dir: dir.to_owned(),
        path: spare,
        file,
    });
    Ok(())
}
