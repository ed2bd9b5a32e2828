//! Where a writing file tool (`write_file`, `edit_file`, `multi_edit`) may
//! write, and the one way it writes: a temp file beside the target, renamed
//! over it, both beneath the workspace root's fd.
//!
//! A path is refused, before anything is opened, when it leaves the
//! workspace by its spelling, when its deepest existing part leads out
//! through a symlink, or when it names (as spelt, or once its symlinks are
//! resolved) an entry the host trusts: `.git`, `.subagent` or `.claude` at
//! any depth (git runs what a `.git` holds; the supervisor reads the other
//! two), or one of the operator's protected paths (a sessions dir or
//! results file in the workspace). These are the entries the tool sandbox
//! binds read-only for process tools and the copy-on-write layer never
//! applies; a file tool runs in the worker, outside that sandbox, so it
//! refuses them itself.
//!
//! What is left is opened as `crate::beneath` opens: every directory by
//! `openat2` beneath the root with every symlink refused by the kernel, so
//! a swap between the check and the write fails, never reaching outside.
//! Missing parents are made one `mkdirat` at a time beneath the same fds.
//!
//! This module never follows a symlink at write time and never deletes
//! anything but its own temp file.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use subagent_sandbox::PROTECTED_WORKSPACE_ENTRIES;

use crate::beneath::{self, Opened};
use crate::tool::ToolError;
use crate::workspace::{Workspace, WorkspaceError};

/// Largest file a writing tool reads or writes, bytes: an edit holds the
/// file and its result in memory, and a model never needs more in one call.
pub const MAX_FILE_BYTES: usize = 16 * 1024 * 1024;

/// Permissions of a file the tool creates (before the umask-free create:
/// the tool sets them, as `open(2)` with mode 0644 would).
const NEW_FILE_MODE: u32 = 0o644;
/// Permissions of a directory the tool creates.
const NEW_DIR_MODE: u32 = 0o755;

/// Tries of a temp-file name already taken.
const TEMP_NAME_TRIES: u32 = 16;

/// A file a writing tool may write: its parent open beneath the root.
#[derive(Debug)]
pub(crate) struct WriteTarget {
    /// The parent directory, open beneath the root.
    parent: OwnedFd,
    /// The file's name in it.
    name: OsString,
    /// The file as tool output shows it (root-relative).
    pub(crate) shown: String,
    /// Parents that do not exist yet, made by [`WriteTarget::write`].
    missing_parents: Vec<OsString>,
}

/// The current content of a target, when it exists.
#[derive(Debug)]
pub(crate) struct Existing {
    /// Its bytes.
    pub(crate) bytes: Vec<u8>,
    /// Its permission bits, kept by a rewrite.
    mode: u32,
}

/// Resolves `file_path` (relative to the root, or absolute inside it) for
/// writing, refusing what the module doc names. `protected` are the
/// operator's protected paths, absolute.
pub(crate) fn resolve(
    workspace: &Workspace,
    file_path: &str,
    protected: &[PathBuf],
) -> Result<WriteTarget, ToolError> {
    if file_path.trim().is_empty() {
        return Err(ToolError::InvalidArguments(
            "file_path is empty; name the file to write, relative to the workspace root".into(),
        ));
    }
    if file_path.contains('\0') {
        return Err(ToolError::InvalidArguments(
            "file_path contains a NUL byte".into(),
        ));
    }
    let spelt = workspace.lexical_relative(file_path)?;
    refuse_trusted(&spelt, file_path, workspace, protected)?;
    // The deepest existing part, with its symlinks resolved; the rest is
    // made by the write.
    let mut existing = spelt.clone();
    let mut rest: Vec<OsString> = Vec::new();
    let canonical = loop {
        match std::fs::canonicalize(workspace.root().join(&existing)) {
            Ok(canonical) => break canonical,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                let Some(last) = existing.file_name().map(OsStr::to_owned) else {
                    return Err(ToolError::Failed(format!(
                        "the workspace root {} is gone; the operator must fix --workspace",
                        workspace.root().display()
                    )));
                };
                rest.push(last);
                existing.pop();
            }
            Err(source) => {
                return Err(WorkspaceError::Inaccessible {
                    path: file_path.to_owned(),
                    source,
                }
                .into());
            }
        }
    };
    let Ok(resolved) = canonical.strip_prefix(workspace.root()) else {
        return Err(workspace.symlink_outside(file_path).into());
    };
    rest.reverse();
    let resolved: PathBuf = resolved
        .iter()
        .chain(rest.iter().map(OsString::as_os_str))
        .collect();
    refuse_trusted(&resolved, file_path, workspace, protected)?;
    let Some(name) = resolved.file_name().map(OsStr::to_owned) else {
        return Err(ToolError::Failed(format!(
            "`{file_path}` is the workspace root, a directory; name a file in it"
        )));
    };
    let parent_path = resolved.parent().unwrap_or(Path::new(""));
    // Parents that exist are opened now; those that do not are made at the
    // write, so a refused call leaves no directory behind.
    let missing = rest.len().saturating_sub(1);
    let existing_depth = parent_path.iter().count().saturating_sub(missing);
    let existing_parent: PathBuf = parent_path.iter().take(existing_depth).collect();
    let missing_parents: Vec<OsString> = parent_path
        .iter()
        .skip(existing_depth)
        .map(OsStr::to_owned)
        .collect();
    let parent = match beneath::open(workspace.root_fd(), &existing_parent) {
        Ok(Opened::Directory(fd)) => fd,
        Ok(_) => {
            return Err(ToolError::Failed(format!(
                "`{}` is not a directory, so `{file_path}` cannot be made in it",
                workspace.display(&workspace.root().join(&existing_parent))
            )));
        }
        Err(source) => return Err(workspace.open_failed(file_path, source).into()),
    };
    Ok(WriteTarget {
        parent,
        name,
        shown: workspace.display(&workspace.root().join(&resolved)),
        missing_parents,
    })
}

/// Refuses a root-relative `path` under an entry the host trusts.
fn refuse_trusted(
    path: &Path,
    asked: &str,
    workspace: &Workspace,
    protected: &[PathBuf],
) -> Result<(), ToolError> {
    let trusted = path.components().find_map(|c| match c {
        Component::Normal(name) => PROTECTED_WORKSPACE_ENTRIES
            .iter()
            .find(|entry| name == OsStr::new(entry))
            .copied(),
        _ => None,
    });
    if let Some(entry) = trusted {
        return Err(ToolError::Failed(format!(
            "`{asked}` is under {entry}, which the host trusts (git runs what .git holds; \
             subagent reads .subagent and .claude): file tools never write there; write \
             elsewhere in the workspace"
        )));
    }
    let absolute = workspace.root().join(path);
    if let Some(kept) = protected
        .iter()
        .find(|p| absolute.starts_with(p) || p.starts_with(&absolute))
    {
        return Err(ToolError::Failed(format!(
            "`{asked}` is the operator's protected {} (a sessions dir or results file): tools \
             never write there",
            kept.display()
        )));
    }
    Ok(())
}

impl WriteTarget {
    /// The file's current content and mode; `None` when it does not exist.
    /// Anything but a regular file is refused, as is a file larger than
    /// [`MAX_FILE_BYTES`].
    pub(crate) fn read_existing(&self) -> Result<Option<Existing>, ToolError> {
        if !self.missing_parents.is_empty() {
            return Ok(None);
        }
        let cannot = |e: io::Error| ToolError::Failed(format!("cannot read `{}`: {e}", self.shown));
        let stat = match rustix::fs::statat(&self.parent, &self.name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(cannot(e.into())),
        };
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => {}
            FileType::Directory => {
                return Err(ToolError::Failed(format!(
                    "`{}` is a directory; name a file",
                    self.shown
                )));
            }
            FileType::Symlink => {
                return Err(ToolError::Failed(format!(
                    "`{}` changed while it was being opened (a rename or symlink in the \
                     workspace); call again once the workspace is settled",
                    self.shown
                )));
            }
            _ => {
                return Err(ToolError::Failed(format!(
                    "`{}` is not a regular file; file tools write regular files only",
                    self.shown
                )));
            }
        }
        let mut file = match beneath::open_file(&self.parent, &self.name).map_err(cannot)? {
            Ok(file) => file,
            Err(_) => {
                return Err(ToolError::Failed(format!(
                    "`{}` is not a regular file; file tools write regular files only",
                    self.shown
                )));
            }
        };
        let size = file.metadata().map_err(cannot)?.len();
        if size > MAX_FILE_BYTES as u64 {
            return Err(too_large(&self.shown, size));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        // One byte past the cap says the file grew past it meanwhile.
        (&mut file)
            .take(MAX_FILE_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(cannot)?;
        if bytes.len() > MAX_FILE_BYTES {
            return Err(too_large(&self.shown, bytes.len() as u64));
        }
        let mode = rustix::fs::fstat(&file)
            .map_err(|e| cannot(e.into()))?
            .st_mode;
        Ok(Some(Existing {
            bytes,
            mode: mode & 0o7777,
        }))
    }

    /// Writes `content` as the whole file: missing parents are made, the
    /// bytes go to a temp file beside it, which is renamed over the name,
    /// so a reader sees the old file or the new one, never a part. A
    /// rewrite keeps `existing`'s permissions (setuid and setgid dropped).
    pub(crate) fn write(
        &self,
        content: &[u8],
        existing: Option<&Existing>,
    ) -> Result<(), ToolError> {
        if content.len() > MAX_FILE_BYTES {
            return Err(ToolError::Failed(format!(
                "the new content of `{}` is {} bytes, more than the {MAX_FILE_BYTES} a file tool \
                 writes; write it in smaller files",
                self.shown,
                content.len()
            )));
        }
        let cannot =
            |e: io::Error| ToolError::Failed(format!("cannot write `{}`: {e}", self.shown));
        let mut dir: Option<OwnedFd> = None;
        for name in &self.missing_parents {
            let at = dir.as_ref().map_or(self.parent.as_fd(), AsFd::as_fd);
            match rustix::fs::mkdirat(at, name.as_os_str(), Mode::from_raw_mode(NEW_DIR_MODE)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(cannot(e.into())),
            }
            let opened = beneath::open_directory(at, name).map_err(cannot)?;
            dir = Some(opened);
        }
        let dir = dir.as_ref().map_or(self.parent.as_fd(), AsFd::as_fd);
        let mode = existing.map_or(NEW_FILE_MODE, |e| e.mode & 0o1777);
        let (temp_name, temp) = create_temp(dir, &self.name, mode).map_err(cannot)?;
        let written = write_all(temp, content).and_then(|()| {
            rustix::fs::renameat(dir, temp_name.as_os_str(), dir, self.name.as_os_str())
                .map_err(io::Error::from)
        });
        if let Err(e) = written {
            let _ = rustix::fs::unlinkat(dir, temp_name.as_os_str(), AtFlags::empty());
            return Err(cannot(e));
        }
        Ok(())
    }
}

fn too_large(shown: &str, size: u64) -> ToolError {
    ToolError::Failed(format!(
        "`{shown}` is {size} bytes, more than the {MAX_FILE_BYTES} a file tool edits; change it \
         with bash or python_execute"
    ))
}

fn write_all(temp: File, content: &[u8]) -> io::Result<()> {
    let mut temp = temp;
    temp.write_all(content)?;
    temp.flush()
}

/// A new temp file beside `name` in `dir`, made exclusively (never an
/// existing name, never through a symlink).
fn create_temp(dir: impl AsFd, name: &OsStr, mode: u32) -> io::Result<(OsString, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = dir.as_fd();
    let mut last = io::Error::other("no temp name tried");
    for _ in 0..TEMP_NAME_TRIES {
        let count = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let mut temp = OsString::from(".");
        // Cut so the temp name stays within NAME_MAX whatever the name.
        let stem = &name.as_bytes()[..name.len().min(200)];
        temp.push(OsStr::from_bytes(stem));
        temp.push(format!(
            ".subagent-write-{}-{count}-{nanos}",
            std::process::id()
        ));
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        match rustix::fs::openat(dir, temp.as_os_str(), flags, Mode::from_raw_mode(mode)) {
            Ok(fd) => {
                // The umask may have taken bits the file had.
                rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))?;
                return Ok((temp, File::from(fd)));
            }
            Err(rustix::io::Errno::EXIST) => last = io::Error::from(rustix::io::Errno::EXIST),
            Err(e) => return Err(e.into()),
        }
    }
    Err(last)
}
