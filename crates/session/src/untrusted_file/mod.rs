//! Opening a file the supervisor did not write itself, or wrote but another
//! process may have touched since: session files and their key, results
//! files, merge outputs, the trust record, config and agent files, and
//! temporary files beside them.
//!
//! Such a file may sit where a tool, or anything else that can write the
//! directory, swapped it for a symbolic link (to a file outside, to
//! `/dev/zero`), a FIFO (a read that never returns) or a sparse file of
//! gigabytes (a read that fills memory). So a file read back:
//!
//! - is opened with `O_NOFOLLOW | O_NONBLOCK`: a link at its name is refused
//!   rather than followed, and opening a FIFO does not wait for a writer;
//! - must be a regular file, checked with `fstat` on the descriptor just
//!   opened (a check of the path before the open could be raced);
//! - is size-capped before a byte is read: whole files by the size `fstat`
//!   reports (and a read that finds more than the cap fails), files that
//!   are large by nature line by line ([`CappedLines`]);
//! - is appended to only while its path still names the file that was
//!   opened ([`FileIdentity`], device and inode): checked by the caller, or
//!   by the open itself when it is given the file it expects
//!   ([`open_append_same`]);
//! - and a temporary file is created `O_EXCL | O_NOFOLLOW`
//!   ([`create_temp`]), so a name planted beforehand is never written
//!   through.
//!
//! Every call blocks on the disk: async code calls it from
//! `spawn_blocking`. It never follows a link in the last component of a
//! path and never reads more than the cap it is given; it decides nothing
//! about what the bytes mean (whether a session file is to be believed is
//! [`crate::chain`]'s), and the caps are its callers'.

mod error;
mod lines;
mod open;

pub use error::UntrustedFileError;
pub use lines::{CappedLine, CappedLines};
pub use open::{
    FileIdentity, OpenedForAppend, OpenedForRead, create_new, create_temp, open_append,
    open_append_existing, open_append_same, open_read, open_read_existing, read_capped,
    read_capped_string, read_opened,
};
