//! Opening a file the supervisor reads back as input from strangers: a
//! session file, a server's record, anything a tool may have replaced
//! between the write and the read.
//!
//! Every open here is `O_NOFOLLOW | O_NONBLOCK`: a symbolic link in the
//! last component is refused instead of followed, and a FIFO does not
//! block the open. What was opened is checked on the descriptor (`fstat`):
//! only a regular file is read, so a FIFO cannot hang the reader and
//! `/dev/zero` cannot feed it without end. Reads are capped before they
//! start (the size `fstat` gives) and while they run (a file that grows
//! past the cap is refused, not truncated into something that parses).
//! Appends name the file they expect ([`Identity`]: device and inode) and
//! refuse another one at the path.
//!
//! It only opens and reads; it never decides whether the bytes are to be
//! believed (that is [`super::chain`]), and it never creates a file.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;

/// Largest session file read back, bytes (32 MiB). A resumed conversation
/// goes to the worker in one frame of at most 16 MiB
/// (`subagent_protocol::frame::DEFAULT_MAX_PAYLOAD`), and the rest of a
/// file (usage, logs, output excerpts capped at 50 KiB each) is a fraction
/// of that: a real run's file is a few MiB. Twice the frame leaves room
/// for long runs while a planted file cannot make a reader hold more than
/// this (`sessions ls` reads one file at a time).
pub const SESSION_FILE_CAP: u64 = 32 * 1024 * 1024;

/// Which file a path named: device and inode, as `fstat` gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Identity {
    /// The device.
    pub dev: u64,
    /// The inode.
    pub ino: u64,
}

impl Identity {
    /// The identity of an open file.
    pub fn of(file: &File) -> io::Result<Self> {
        let meta = file.metadata()?;
        Ok(Self {
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }
}

/// Why an untrusted file was not read.
#[derive(Debug, thiserror::Error)]
pub enum UntrustedError {
    /// The last component is a symbolic link.
    #[error(
        "{} is a symbolic link: files the supervisor reads back are never followed through \
         links; name the file itself",
        path.display()
    )]
    Symlink {
        /// The path.
        path: PathBuf,
    },
    /// The open or the read failed.
    #[error("read {}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// Not a regular file (a FIFO, a device, a socket, a directory).
    #[error(
        "{} is a {kind}, not a regular file: only regular files are read back (a FIFO would \
         block the reader, a device such as /dev/zero never ends)",
        path.display()
    )]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// Larger than the cap.
    #[error(
        "{} is larger than the {cap} bytes a file of its kind may be, so it was not read (a \
         file written by subagent stays far below that)",
        path.display()
    )]
    TooLarge {
        /// The path.
        path: PathBuf,
        /// The cap, bytes.
        cap: u64,
    },
    /// An append found another file at the path than the one expected.
    #[error(
        "{} is no longer the file that was read (it was replaced since): nothing is written to it",
        path.display()
    )]
    Replaced {
        /// The path.
        path: PathBuf,
    },
}

impl UntrustedError {
    /// The path the error is about.
    pub fn path(&self) -> &Path {
        match self {
            UntrustedError::Symlink { path }
            | UntrustedError::Io { path, .. }
            | UntrustedError::NotRegular { path, .. }
            | UntrustedError::TooLarge { path, .. }
            | UntrustedError::Replaced { path } => path,
        }
    }
}

/// A regular file opened without following a link, with what `fstat` said.
#[derive(Debug)]
pub struct UntrustedFile {
    /// The descriptor.
    pub file: File,
    /// Which file it is.
    pub identity: Identity,
    /// Its size when opened, bytes.
    pub len: u64,
}

/// Opens `path` for reading: `O_NOFOLLOW | O_NONBLOCK`, regular files only.
pub fn open_read(path: &Path) -> Result<UntrustedFile, UntrustedError> {
    let mut options = OpenOptions::new();
    options.read(true);
    open_with(path, &mut options)
}

/// Opens `path` to append to it (and read its tail): `O_APPEND`,
/// `O_NOFOLLOW | O_NONBLOCK`, regular files only; never creates it.
pub fn open_append(path: &Path) -> Result<UntrustedFile, UntrustedError> {
    let mut options = OpenOptions::new();
    options.read(true).append(true);
    open_with(path, &mut options)
}

/// [`open_append`], refused unless the path still names `expected`.
pub fn open_append_same(path: &Path, expected: Identity) -> Result<UntrustedFile, UntrustedError> {
    let opened = open_append(path)?;
    if opened.identity != expected {
        return Err(UntrustedError::Replaced {
            path: path.to_owned(),
        });
    }
    Ok(opened)
}

fn open_with(path: &Path, options: &mut OpenOptions) -> Result<UntrustedFile, UntrustedError> {
    let io = |source| UntrustedError::Io {
        path: path.to_owned(),
        source,
    };
    let file = options
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC).bits())
        .open(path)
        .map_err(|e| {
            // ELOOP is how O_NOFOLLOW says the last component is a link.
            if e.raw_os_error() == Some(nix::libc::ELOOP) {
                UntrustedError::Symlink {
                    path: path.to_owned(),
                }
            } else {
                io(e)
            }
        })?;
    let meta = file.metadata().map_err(io)?;
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(UntrustedError::NotRegular {
            path: path.to_owned(),
            kind: kind_name(&kind),
        });
    }
    Ok(UntrustedFile {
        file,
        identity: Identity {
            dev: meta.dev(),
            ino: meta.ino(),
        },
        len: meta.len(),
    })
}

fn kind_name(kind: &std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "directory"
    } else if kind.is_fifo() {
        "FIFO"
    } else if kind.is_char_device() {
        "character device"
    } else if kind.is_block_device() {
        "block device"
    } else if kind.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// The whole of the regular file at `path`, at most `cap` bytes: refused
/// before reading when `fstat` says it is larger, and while reading when
/// it grew past the cap since.
pub fn read_capped(path: &Path, cap: u64) -> Result<(Vec<u8>, Identity), UntrustedError> {
    let opened = open_read(path)?;
    let too_large = || UntrustedError::TooLarge {
        path: path.to_owned(),
        cap,
    };
    if opened.len > cap {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(opened.len).unwrap_or(0));
    opened
        .file
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| UntrustedError::Io {
            path: path.to_owned(),
            source,
        })?;
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    Ok((bytes, opened.identity))
}

#[cfg(test)]
#[path = "untrusted_tests.rs"]
mod tests;
