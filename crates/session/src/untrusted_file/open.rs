//! Opening a file read back (for reading, for appending, for appending to
//! the very file read before) and creating a temporary file, each refusing
//! a link and anything but a regular file; and a file's identity, to tell
//! whether its path still names it.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};

use super::error::UntrustedFileError;

/// Opens `path` with `options` and the flags of every open of a file read
/// back: a link at the name fails the open (`ELOOP`) instead of being
/// followed, and a FIFO opens at once instead of waiting for a writer.
fn open_guarded(path: &Path, options: &mut OpenOptions) -> Result<File, UntrustedFileError> {
    options
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK).bits())
        .open(path)
        .map_err(|e| open_error(path, e))
}

/// Which file a path named: its device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileIdentity {
    dev: u64,
    ino: u64,
}

impl FileIdentity {
    /// The identity of an open file.
    pub fn of(file: &File) -> io::Result<Self> {
        Ok(Self::from_metadata(&file.metadata()?))
    }

    fn from_metadata(meta: &Metadata) -> Self {
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }

    /// What `path` names now, without following a link at its end (a link
    /// is a file of its own, so it never matches the file it points to);
    /// `None` when nothing does.
    pub fn at(path: &Path) -> io::Result<Option<Self>> {
        match std::fs::symlink_metadata(path) {
            Ok(meta) => Ok(Some(Self::from_metadata(&meta))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// True while `path` names this file.
    pub fn still_named_by(&self, path: &Path) -> io::Result<bool> {
        Ok(Self::at(path)? == Some(*self))
    }
}

/// What a non-regular file is, for messages.
fn kind_of(file_type: std::fs::FileType) -> &'static str {
    if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_dir() {
        "a directory"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else {
        "a special file"
    }
}

/// The refusal of what `meta` describes at `path` when it is not a regular
/// file: a link, or a FIFO, device, socket or directory.
fn refusal(path: &Path, meta: &Metadata) -> Option<UntrustedFileError> {
    let file_type = meta.file_type();
    if file_type.is_symlink() {
        Some(UntrustedFileError::Link {
            path: path.to_owned(),
        })
    } else if !file_type.is_file() {
        Some(UntrustedFileError::NotRegular {
            path: path.to_owned(),
            kind: kind_of(file_type),
        })
    } else {
        None
    }
}

/// Refuses what `path` names before it is opened when that is plainly not
/// a regular file: opening a device can act on it. The check after the
/// open ([`fstat_regular`]) is the one that counts; this one only spares
/// the open.
fn refuse_before_open(path: &Path) -> Result<(), UntrustedFileError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => refusal(path, &meta).map_or(Ok(()), Err),
        // Missing or unreadable: the open says which.
        Err(_) => Ok(()),
    }
}

/// An open's error as the refusal it stands for: `ELOOP` from
/// `O_NOFOLLOW` is a link at the name, `ENXIO` a FIFO or socket.
fn open_error(path: &Path, source: io::Error) -> UntrustedFileError {
    let errno = source.raw_os_error().map(Errno::from_raw);
    if matches!(errno, Some(Errno::ELOOP | Errno::ENXIO))
        && let Ok(meta) = std::fs::symlink_metadata(path)
        && let Some(refused) = refusal(path, &meta)
    {
        return refused;
    }
    UntrustedFileError::io(path, source)
}

/// What `fstat` says of `file` (just opened at `path`), once it says a
/// regular file: the check of the file itself, which no swap of the path
/// can race.
fn fstat_regular(path: &Path, file: &File) -> Result<Metadata, UntrustedFileError> {
    let meta = file
        .metadata()
        .map_err(|e| UntrustedFileError::io(path, e))?;
    refusal(path, &meta).map_or(Ok(meta), Err)
}

/// `file` once `fstat` says it is a regular file, with its size and
/// identity, and blocking again (`O_NONBLOCK` was only for the open).
fn checked(path: &Path, file: File) -> Result<(File, u64, FileIdentity), UntrustedFileError> {
    let meta = fstat_regular(path, &file)?;
    let flags =
        fcntl(&file, FcntlArg::F_GETFL).map_err(|e| UntrustedFileError::io(path, e.into()))?;
    let blocking = OFlag::from_bits_truncate(flags) - OFlag::O_NONBLOCK;
    fcntl(&file, FcntlArg::F_SETFL(blocking))
        .map_err(|e| UntrustedFileError::io(path, e.into()))?;
    Ok((file, meta.len(), FileIdentity::from_metadata(&meta)))
}

/// A regular file opened for reading by [`open_read`].
#[derive(Debug)]
pub struct OpenedForRead {
    /// Open for reading, blocking.
    pub file: File,
    /// Its size when it was opened.
    pub size: u64,
    /// Which file it is, to check later that the path still names it.
    pub identity: FileIdentity,
}

/// Opens `path` for reading: a regular file, not through a link; `None`
/// when nothing is there.
pub fn open_read(path: &Path) -> Result<Option<OpenedForRead>, UntrustedFileError> {
    match open_read_existing(path) {
        Err(UntrustedFileError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
            Ok(None)
        }
        other => other.map(Some),
    }
}

/// [`open_read`] for a file that must be there: nothing at `path` is an
/// [`UntrustedFileError::Io`] of kind `NotFound`.
pub fn open_read_existing(path: &Path) -> Result<OpenedForRead, UntrustedFileError> {
    refuse_before_open(path)?;
    let file = open_guarded(path, OpenOptions::new().read(true))?;
    let (file, size, identity) = checked(path, file)?;
    Ok(OpenedForRead {
        file,
        size,
        identity,
    })
}

/// The whole of the regular file at `path` if it holds at most `cap`
/// bytes; `None` when nothing is there. The size is checked before the
/// read, and a file that grew past the cap meanwhile is refused too.
pub fn read_capped(path: &Path, cap: u64) -> Result<Option<Vec<u8>>, UntrustedFileError> {
    match open_read(path)? {
        Some(opened) => read_opened(path, opened, cap).map(Some),
        None => Ok(None),
    }
}

/// The whole of `opened` (the file at `path`) if it holds at most `cap`
/// bytes: for a caller that decides the cap once it knows the size, or
/// keeps the file's identity.
pub fn read_opened(
    path: &Path,
    opened: OpenedForRead,
    cap: u64,
) -> Result<Vec<u8>, UntrustedFileError> {
    let OpenedForRead { file, size, .. } = opened;
    if size > cap {
        return Err(UntrustedFileError::TooLarge {
            path: path.to_owned(),
            size,
            cap,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| UntrustedFileError::io(path, e))?;
    let read = bytes.len() as u64;
    if read > cap {
        return Err(UntrustedFileError::TooLarge {
            path: path.to_owned(),
            size: read,
            cap,
        });
    }
    Ok(bytes)
}

/// [`read_capped`] as UTF-8 text; text that is not UTF-8 is an I/O error
/// of kind `InvalidData`, as `std::fs::read_to_string` reports it.
pub fn read_capped_string(path: &Path, cap: u64) -> Result<Option<String>, UntrustedFileError> {
    let Some(bytes) = read_capped(path, cap)? else {
        return Ok(None);
    };
    String::from_utf8(bytes).map(Some).map_err(|_| {
        UntrustedFileError::io(
            path,
            io::Error::new(
                io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            ),
        )
    })
}

/// A file opened for appending by [`open_append`].
#[derive(Debug)]
pub struct OpenedForAppend {
    /// Open for reading and appending.
    pub file: File,
    /// Which file it is, to check later that the path still names it.
    pub identity: FileIdentity,
    /// True when this open created it.
    pub created: bool,
}

/// Opens the regular file at `path` for reading and appending, creating
/// it when nothing is there (`O_EXCL`, so a link planted meanwhile is not
/// followed). A link at the name, or anything but a regular file, is
/// refused.
pub fn open_append(path: &Path) -> Result<OpenedForAppend, UntrustedFileError> {
    // Two tries: a file that appears between the first open and the
    // create is opened as an existing one.
    for _ in 0..2 {
        match open_append_existing(path) {
            Err(UntrustedFileError::Io { source, .. })
                if source.kind() == io::ErrorKind::NotFound => {}
            other => return other,
        }
        let created = open_guarded(
            path,
            OpenOptions::new().read(true).append(true).create_new(true),
        );
        match created {
            Ok(file) => return opened_for_append(path, file, true),
            Err(UntrustedFileError::Io { source, .. })
                if source.kind() == io::ErrorKind::AlreadyExists =>
            {
                continue;
            }
            Err(e) => return Err(e),
        }
    }
    Err(UntrustedFileError::io(
        path,
        io::Error::other("the file keeps appearing and disappearing while it is opened"),
    ))
}

/// [`open_append`] of a file that must be there: never creates it, and
/// nothing at `path` is an [`UntrustedFileError::Io`] of kind `NotFound`.
pub fn open_append_existing(path: &Path) -> Result<OpenedForAppend, UntrustedFileError> {
    refuse_before_open(path)?;
    let file = open_guarded(path, OpenOptions::new().read(true).append(true))?;
    opened_for_append(path, file, false)
}

/// `file` (just opened at `path`) checked to be a regular file, with its
/// identity.
fn opened_for_append(
    path: &Path,
    file: File,
    created: bool,
) -> Result<OpenedForAppend, UntrustedFileError> {
    let (file, _, identity) = checked(path, file)?;
    Ok(OpenedForAppend {
        file,
        identity,
        created,
    })
}

/// Opens `path` for reading and appending when it still names `expected`
/// (a file read or created before): a link at the name is refused, and
/// anything but a regular file, or another file, is refused with nothing
/// written to it. Writers that open a file again for every line pay one
/// `open` and one `fstat`.
pub fn open_append_same(path: &Path, expected: FileIdentity) -> Result<File, UntrustedFileError> {
    let file = open_guarded(path, OpenOptions::new().read(true).append(true))?;
    // The type too, not the identity alone: a FIFO made where the file was
    // removed can be given the removed file's inode number.
    let meta = fstat_regular(path, &file)?;
    if FileIdentity::from_metadata(&meta) != expected {
        return Err(UntrustedFileError::Replaced {
            path: path.to_owned(),
        });
    }
    Ok(file)
}

/// Creates a new file at `path` for writing; fails when anything is there
/// already, a link included (`O_EXCL`, which never follows one).
pub fn create_new(path: &Path) -> Result<File, UntrustedFileError> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(OFlag::O_NOFOLLOW.bits())
        .open(path)
        .map_err(|e| UntrustedFileError::io(path, e))
}

/// Creates the temporary file `path`, whose name is this process's own
/// (it carries its pid): whatever is there already (a file left by a dead
/// process that had the same pid, or a link planted to be written through)
/// is removed, never followed, and the file created `O_EXCL` once more.
pub fn create_temp(path: &Path) -> Result<File, UntrustedFileError> {
    match create_new(path) {
        Err(UntrustedFileError::Io { source, .. })
            if source.kind() == io::ErrorKind::AlreadyExists =>
        {
            // `unlink` removes a link itself, not what it points to.
            std::fs::remove_file(path).map_err(|e| UntrustedFileError::io(path, e))?;
            create_new(path)
        }
        other => other,
    }
}

#[cfg(test)]
#[path = "open_tests.rs"]
mod tests;
