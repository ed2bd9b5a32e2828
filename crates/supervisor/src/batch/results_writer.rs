//! Appending to the results file a batch opened ([`super::results`]),
//! durably and only while its path still names that file.
//!
//! A line is written with one `write_all` and then `sync_data`, so after a
//! crash the file is every finished line plus at most one torn line. Before
//! each append and once the batch ends, the path must still name the file
//! opened (device and inode, [`FileIdentity`]): a file renamed over it, or
//! the file moved or removed, would send the batch's lines where no re-run
//! reads them while the path shows another story. Then the line still goes
//! to the batch's own file, never to the one at the path, the whole of the
//! batch's file is copied to `<name>.kept-<pid>` beside the path, and the
//! append fails with [`ResultsError::Replaced`], which stops the batch.
//!
//! It never reads, writes or removes the file the path names now.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use nix::fcntl::Flock;

use super::lock::{parent_dir, sync_parent_dir};
use super::result_line::ResultLine;
use super::results_error::ResultsError;
use crate::untrusted_file::{FileIdentity, create_new};

/// Appends result lines durably, to the file the batch opened and only
/// while its path still names it.
#[derive(Debug)]
pub struct ResultsWriter {
    path: PathBuf,
    /// Unlocked when dropped.
    file: Flock<File>,
    /// Which file `file` is.
    identity: FileIdentity,
    /// Where the batch's lines were copied once the path stopped naming
    /// its file (or why they could not be).
    saved: Option<Result<(PathBuf, File), String>>,
}

impl ResultsWriter {
    /// The writer of the locked `file`, which `path` named when opened.
    pub(super) fn new(path: &Path, file: Flock<File>, identity: FileIdentity) -> Self {
        Self {
            path: path.to_owned(),
            file,
            identity,
            saved: None,
        }
    }

    /// Appends `line` with one write and syncs it to disk before returning.
    ///
    /// The path must still name the file the batch opened: when something
    /// replaced it (renamed a file over it, moved or removed it), the line
    /// still goes to the batch's own file, never to the one the path names
    /// now, every line of that file is copied beside the path, and the
    /// append fails with [`ResultsError::Replaced`], which stops the batch.
    pub fn append(&mut self, line: &ResultLine) -> Result<(), ResultsError> {
        let still_named = self.still_named()?;
        let mut bytes = serde_json::to_vec(line).map_err(|e| ResultsError::Io {
            path: self.path.clone(),
            source: e.into(),
        })?;
        bytes.push(b'\n');
        self.file
            .write_all(&bytes)
            .and_then(|()| self.file.sync_data())
            .map_err(|source| ResultsError::Io {
                path: self.path.clone(),
                source,
            })?;
        if still_named {
            Ok(())
        } else {
            Err(self.replaced())
        }
    }

    /// Fails, as [`Self::append`] does, when the path no longer names the
    /// batch's file: called once the last line is written, so a swap after
    /// the last append is told too.
    pub fn verify(&mut self) -> Result<(), ResultsError> {
        if self.still_named()? {
            Ok(())
        } else {
            Err(self.replaced())
        }
    }

    fn still_named(&self) -> Result<bool, ResultsError> {
        self.identity
            .still_named_by(&self.path)
            .map_err(|source| ResultsError::Io {
                path: self.path.clone(),
                source,
            })
    }

    /// The error for a replaced file, once the batch's lines (all of them,
    /// the last one included) are copied to a new file beside the path.
    fn replaced(&mut self) -> ResultsError {
        let saved = match self.saved.take() {
            None => save_copy(&self.path, &self.file),
            Some(Ok((saved, copy))) => refresh_copy(&self.file, &copy)
                .map(|()| (saved, copy))
                .map_err(|e| e.to_string()),
            Some(Err(why)) => Err(why),
        };
        let shown = saved
            .as_ref()
            .map(|(path, _)| path.clone())
            .map_err(Clone::clone);
        self.saved = Some(saved);
        ResultsError::Replaced {
            path: self.path.clone(),
            saved: shown,
        }
    }
}

/// Copies the batch's file to `<name>.kept-<pid>` beside `path`, created
/// new (never through a link planted there).
fn save_copy(path: &Path, file: &File) -> Result<(PathBuf, File), String> {
    let name = path
        .file_name()
        .map_or_else(|| "results".into(), |n| n.to_string_lossy().into_owned());
    let saved = parent_dir(path).join(format!("{name}.kept-{}", std::process::id()));
    let copy = create_new(&saved).map_err(|e| e.to_string())?;
    refresh_copy(file, &copy).map_err(|e| format!("{}: {e}", saved.display()))?;
    sync_parent_dir(&saved).map_err(|e| format!("{}: {e}", saved.display()))?;
    Ok((saved, copy))
}

/// Makes `copy` hold what `file` holds now, and syncs it.
fn refresh_copy(file: &File, mut copy: &File) -> std::io::Result<()> {
    let mut from = file;
    from.seek(SeekFrom::Start(0))?;
    copy.set_len(0)?;
    copy.seek(SeekFrom::Start(0))?;
    std::io::copy(&mut from, &mut copy)?;
    copy.sync_all()
}
