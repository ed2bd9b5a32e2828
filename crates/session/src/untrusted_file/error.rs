//! Why a file read back was refused: each message names the file, says
//! what it is instead of a regular file of a fitting size (or the file
//! expected), and what to do.
//!
//! It only words the refusal; what a caller does with it (skip the file,
//! refuse the run) is the caller's.

use std::io;
use std::path::{Path, PathBuf};

use crate::units::ByteSize;

/// Why a file the supervisor reads back cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum UntrustedFileError {
    /// The name is a symbolic link.
    #[error(
        "{} is a symbolic link; a file the supervisor reads back is opened only as a regular \
         file, never through a link (one could lead to a file a tool wrote, or a device): \
         replace the link with the file itself",
        path.display()
    )]
    Link {
        /// The link.
        path: PathBuf,
    },
    /// The name is a FIFO, a socket, a device or a directory.
    #[error(
        "{} is {kind}, not a regular file: only regular files are read back (a FIFO would \
         block the reader, a device such as /dev/zero never ends); remove it or put the file \
         there",
        path.display()
    )]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What it is instead: `a FIFO`, `a character device`, ...
        kind: &'static str,
    },
    /// The file is larger than its kind of file may be.
    #[error(
        "{} is {size} bytes, over the {} such a file may be; it is not read: remove it or \
         make it smaller",
        path.display(),
        ByteSize(*cap)
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size when it was opened (or the bytes found past the cap).
        size: u64,
        /// The most that is read.
        cap: u64,
    },
    /// One line of a file read line by line is longer than the line cap.
    #[error(
        "{}, line {line}: longer than {}; the file is not read further: remove or shorten \
         that line",
        path.display(),
        ByteSize(*cap)
    )]
    LineTooLong {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The most one line may be.
        cap: u64,
    },
    /// An append found another file at the path than the one read or
    /// created before.
    #[error(
        "{} is no longer the file that was opened before (it was replaced since): nothing is \
         written to it",
        path.display()
    )]
    Replaced {
        /// The path.
        path: PathBuf,
    },
    /// Opening, reading or writing it failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

impl UntrustedFileError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            Self::Link { path }
            | Self::NotRegular { path, .. }
            | Self::TooLarge { path, .. }
            | Self::LineTooLong { path, .. }
            | Self::Replaced { path }
            | Self::Io { path, .. } => path,
        }
    }

    /// `source` on `path` as an error.
    pub(super) fn io(path: &Path, source: io::Error) -> Self {
        Self::Io {
            path: path.to_owned(),
            source,
        }
    }
}

impl From<UntrustedFileError> for io::Error {
    /// For callers whose errors carry an `io::Error`: the message keeps the
    /// file and the reason; I/O failures keep their kind.
    fn from(error: UntrustedFileError) -> Self {
        match error {
            UntrustedFileError::Io { source, .. } => source,
            other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
        }
    }
}
