//! Opening files and directories beneath a directory fd, never by path.
//!
//! The file tools run in the worker, while tool processes of the same
//! workspace (this subagent's or another's) may rename and symlink in it at
//! any moment. A check on a path followed by an open of that path can be
//! raced: the name is swapped for a symlink to `/etc` between the two. So
//! every open here is one `openat2` relative to a directory fd already known
//! to be inside the workspace, with `RESOLVE_BENEATH` (the kernel refuses
//! any step that leaves that directory, `..` and absolute symlinks included),
//! `RESOLVE_NO_SYMLINKS` (a name that is a symlink at the moment of the open
//! fails with `ELOOP`; the caller already resolved the symlinks it accepts)
//! and `RESOLVE_NO_MAGICLINKS`. What was opened is then checked on the fd
//! (`fstat`), not on the name: a regular file, a directory, or something
//! that is never read (a FIFO would block a read forever, a device could be
//! endless). `O_NONBLOCK` keeps the open itself from blocking on a FIFO.
//!
//! `rustix`'s `openat2` rather than `cap-std`: cap-std follows symlinks that
//! stay inside its directory and, on kernels without `openat2`, resolves
//! paths by hand in user space; here every symlink is refused by the kernel
//! and a kernel without `openat2` (before Linux 5.6) is refused, never
//! emulated. rustix is already in the build (through tempfile).
//!
//! This module must not open anything by an absolute path except the
//! workspace root itself, which the operator configured.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};

/// What an fd turned out to be when it was opened.
#[derive(Debug)]
pub(crate) enum Opened {
    /// A regular file, open for reading.
    File(File),
    /// A directory, open for reading its entries.
    Directory(OwnedFd),
    /// Anything else: never read.
    Other(SpecialKind),
}

/// A file type the file tools never read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpecialKind {
    /// A named pipe: a read blocks until someone writes.
    Fifo,
    /// A character device (`/dev/zero` is endless).
    CharacterDevice,
    /// A block device.
    BlockDevice,
    /// A unix socket.
    Socket,
    /// Anything the kernel reports that is none of the above.
    Unknown,
}

impl SpecialKind {
    /// The kind with its article, as in "`x` is a FIFO".
    pub(crate) fn describe(self) -> &'static str {
        match self {
            SpecialKind::Fifo => "a FIFO",
            SpecialKind::CharacterDevice => "a character device",
            SpecialKind::BlockDevice => "a block device",
            SpecialKind::Socket => "a socket",
            SpecialKind::Unknown => "not a regular file or directory",
        }
    }
}

/// What a directory entry is, without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symlink (never followed by a walk).
    Symlink,
    /// Anything else.
    Other,
}

/// The flags of every open: read only, no controlling terminal, no blocking
/// open of a FIFO, not inherited by tool processes, and the last component
/// never followed.
fn read_flags() -> OFlags {
    OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::NOFOLLOW
}

/// Stay beneath the fd, follow no symlink and no `/proc` magic link.
fn resolve_flags() -> ResolveFlags {
    ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS
}

/// Opens the workspace root: the one open by absolute path.
pub(crate) fn open_root(root: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::DIRECTORY;
    Ok(rustix::fs::open(root, flags, Mode::empty())?)
}

/// Opens `relative` (no symlinks in it; empty means `dir` itself) beneath
/// `dir` and says what it is.
pub(crate) fn open(dir: impl AsFd, relative: &Path) -> io::Result<Opened> {
    let relative: &OsStr = if relative.as_os_str().is_empty() {
        OsStr::new(".")
    } else {
        relative.as_os_str()
    };
    let fd = openat2(dir, relative, read_flags())?;
    classify(fd)
}

/// Opens the directory `name` (one component) of `parent`; a symlink or
/// anything but a directory is an error.
pub(crate) fn open_directory(parent: impl AsFd, name: &OsStr) -> io::Result<OwnedFd> {
    single_component(name)?;
    openat2(parent, name, read_flags() | OFlags::DIRECTORY)
}

/// Opens the regular file `name` (one component) of `parent`. `Ok(Err)`
/// when it is something else (a FIFO, a device, a directory).
pub(crate) fn open_file(
    parent: impl AsFd,
    name: &OsStr,
) -> io::Result<Result<File, Option<SpecialKind>>> {
    single_component(name)?;
    let fd = openat2(parent, name, read_flags())?;
    Ok(match classify(fd)? {
        Opened::File(file) => Ok(file),
        Opened::Directory(_) => Err(None),
        Opened::Other(kind) => Err(Some(kind)),
    })
}

/// What `name` in `parent` is, without following it.
pub(crate) fn entry_kind(parent: impl AsFd, name: &OsStr) -> io::Result<EntryKind> {
    let stat = rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW)?;
    Ok(entry_kind_of(FileType::from_raw_mode(stat.st_mode)))
}

/// The entries of the directory `dir` (not `.` and `..`), with their kinds,
/// sorted by name. Reads through a second fd, so `dir` stays usable.
pub(crate) fn entries(dir: impl AsFd) -> io::Result<Vec<(OsString, EntryKind)>> {
    let dir = dir.as_fd();
    let mut listed = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        let kind = match entry.file_type() {
            // Some filesystems do not fill in d_type: ask without following.
            FileType::Unknown => entry_kind(dir, name).unwrap_or(EntryKind::Other),
            known => entry_kind_of(known),
        };
        listed.push((name.to_owned(), kind));
    }
    listed.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(listed)
}

fn entry_kind_of(file_type: FileType) -> EntryKind {
    match file_type {
        FileType::RegularFile => EntryKind::File,
        FileType::Directory => EntryKind::Directory,
        FileType::Symlink => EntryKind::Symlink,
        _ => EntryKind::Other,
    }
}

/// Tries of an open the kernel answers with `EAGAIN`: with
/// `RESOLVE_BENEATH`, a `..` resolved while any rename or mount happens on
/// the system is refused rather than risked, and may be tried again.
const EAGAIN_TRIES: usize = 8;

fn openat2(dir: impl AsFd, path: &OsStr, flags: OFlags) -> io::Result<OwnedFd> {
    let dir = dir.as_fd();
    let mut tries = 1;
    loop {
        match rustix::fs::openat2(dir, path, flags, Mode::empty(), resolve_flags()) {
            Err(rustix::io::Errno::AGAIN) if tries < EAGAIN_TRIES => tries += 1,
            other => return opened(other),
        }
    }
}

fn opened(result: rustix::io::Result<OwnedFd>) -> io::Result<OwnedFd> {
    match result {
        Ok(fd) => Ok(fd),
        Err(rustix::io::Errno::NOSYS) => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this kernel has no openat2 (Linux 5.6 or later is needed to open files in the \
             workspace safely)",
        )),
        Err(e) => Err(e.into()),
    }
}

/// Checks on the fd, not on the name, what was opened.
fn classify(fd: OwnedFd) -> io::Result<Opened> {
    let stat = rustix::fs::fstat(&fd)?;
    Ok(match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => Opened::File(File::from(fd)),
        FileType::Directory => Opened::Directory(fd),
        FileType::Fifo => Opened::Other(SpecialKind::Fifo),
        FileType::CharacterDevice => Opened::Other(SpecialKind::CharacterDevice),
        FileType::BlockDevice => Opened::Other(SpecialKind::BlockDevice),
        FileType::Socket => Opened::Other(SpecialKind::Socket),
        _ => Opened::Other(SpecialKind::Unknown),
    })
}

/// A walk step names one entry: a `/` in it would be a path, not a name.
fn single_component(name: &OsStr) -> io::Result<()> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.contains(&b'/') || name == "." || name == ".." {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a single directory entry name",
        ));
    }
    Ok(())
}

#[cfg(test)]
#[path = "beneath_tests.rs"]
mod tests;
