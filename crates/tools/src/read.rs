//! `bash_read`: a text file or a range of its lines, numbered; or a
//! directory's entries.
//!
//! In: a path, a first line (`offset`, 1-based) and a line count (`limit`).
//! Out: the lines as `cat -n` prints them (number right-aligned, a tab, the
//! text), then, when the file goes on, the `offset` that reads on. What is
//! read is bounded by the call's output caps and [`READ_MAX_BYTES`], so the
//! model sees every line returned (no middle cut) and huge files are never
//! read whole: lines before `offset` are skipped without being kept, and an
//! over-long line is cut. Binary files are refused with their size and a
//! guess at their type; invalid UTF-8 in a text file is shown replaced.
//! This tool never writes and never touches a path outside the workspace:
//! it reads from the fd [`Workspace::open`] opened beneath the root, after
//! checking on that fd that it is a regular file or a directory.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek};
use std::os::fd::OwnedFd;
use std::path::Path;

use serde::Deserialize;
use subagent_protocol::tool_names::BASH_READ;

use crate::arguments::{at_least_one, count_in_range, parse_arguments};
use crate::beneath::{self, EntryKind, Opened};
use crate::blocking::CancelFlag;
use crate::confined::run_confined;
use crate::tool::{OutputCaps, Tool, ToolContext, ToolError, ToolFuture, ToolOutput};
use crate::workspace::Workspace;

/// Lines shown when the call names no `limit`.
pub const READ_DEFAULT_LIMIT: usize = 2_000;
/// Largest `limit` a call may ask for (the output caps usually bind first).
pub const READ_MAX_LIMIT: usize = 10_000;
/// Most bytes of numbered lines one call returns, whatever the output caps.
pub const READ_MAX_BYTES: usize = 256 * 1024;
/// Entries of a directory listed; the rest are counted.
pub const READ_MAX_LISTED_ENTRIES: usize = 1_000;
/// Bytes looked at to tell a binary file from a text file (as git and
/// ripgrep do, only the beginning is checked).
const SNIFF_BYTES: usize = 8 * 1024;
/// Room kept in the output caps for the closing line that says how to read
/// on, so the caller's cap never cuts it.
const FOOTER_RESERVE_BYTES: usize = 256;
/// Read buffer: skipping to a far `offset` goes through the file in chunks
/// this big.
const READ_BUFFER_BYTES: usize = 64 * 1024;

const DESCRIPTION: &str = "Read a text file, or a range of its lines, with line numbers \
(`cat -n` style: number, tab, text). `offset` is the first line to show (1-based), `limit` \
the number of lines. Long files are shown in parts: the output ends with the offset to read on \
from. On a directory, lists its entries (`/` marks a directory, `@` a symlink; hidden entries \
included). Binary files are refused with their size and type. Paths are relative to the \
workspace root.";

/// The `bash_read` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct BashRead;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadArguments {
    path: String,
    #[serde(default)]
    offset: Option<u64>,
    #[serde(default)]
    limit: Option<u64>,
}

impl Tool for BashRead {
    fn name(&self) -> &str {
        BASH_READ
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "File or directory to read, relative to the workspace root."
                },
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "First line to show, 1-based. Default: 1."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": READ_MAX_LIMIT,
                    "description": format!("Number of lines to show (default {READ_DEFAULT_LIMIT}; fewer when the output would exceed the output cap).")
                }
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, arguments: serde_json::Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let arguments: ReadArguments = parse_arguments(arguments)?;
            let workspace_dir = ctx.workspace_dir.clone();
            let caps = ctx.output_caps;
            let text = run_confined(ctx, move |cancel| {
                read(&workspace_dir, &arguments, caps, cancel)
            })
            .await?;
            Ok(ToolOutput::text(text))
        })
    }
}

pub(crate) fn read(
    workspace_dir: &Path,
    arguments: &ReadArguments,
    caps: OutputCaps,
    cancel: &CancelFlag,
) -> Result<String, ToolError> {
    let offset = at_least_one("offset", arguments.offset, 1)?;
    let limit = count_in_range("limit", arguments.limit, READ_DEFAULT_LIMIT, READ_MAX_LIMIT)?;
    let workspace = Workspace::new(workspace_dir)?;
    let (path, opened) = workspace.open(&arguments.path)?;
    let shown = workspace.display(&path);
    let cannot = |e: io::Error| ToolError::Failed(format!("cannot read `{shown}`: {e}"));

    let mut file = match opened {
        Opened::File(file) => file,
        Opened::Directory(dir) => return list_directory(&dir, &shown, cancel).map_err(cannot),
        // Reading a FIFO would block until someone writes to it; a device
        // may never end.
        Opened::Other(kind) => {
            return Err(ToolError::Failed(format!(
                "`{shown}` is {}, not a regular file or directory; bash_read reads files and \
                 lists directories",
                kind.describe()
            )));
        }
    };
    let size = file.metadata().map_err(cannot)?.len();
    let head = read_head(&mut file, SNIFF_BYTES).map_err(cannot)?;
    if head.is_empty() {
        return Ok(format!("(`{shown}` is empty)\n"));
    }
    if looks_binary(&head) {
        return Err(ToolError::Failed(format!(
            "`{shown}` is a binary file ({}, {} bytes); bash_read shows text files only",
            guess_binary_type(&head),
            thousands(size)
        )));
    }
    file.rewind().map_err(cannot)?;
    let window = LineWindow {
        offset,
        max_lines: limit.min(caps.max_lines.saturating_sub(1).max(1)),
        max_bytes: READ_MAX_BYTES.min(caps.max_bytes.saturating_sub(FOOTER_RESERVE_BYTES).max(1)),
    };
    let reader = BufReader::with_capacity(READ_BUFFER_BYTES, file);
    match numbered_lines(reader, &window, cancel) {
        Ok(Numbered::Lines(text)) => Ok(text),
        Ok(Numbered::PastEnd { lines }) => Err(ToolError::Failed(format!(
            "offset {offset} is past the end of `{shown}`, which has {lines} lines"
        ))),
        Err(LinesError::Cancelled) => Err(CancelFlag::error()),
        Err(LinesError::Io(e)) => Err(cannot(e)),
    }
}

/// Which lines to show and how much output they may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LineWindow {
    /// First line, 1-based.
    offset: usize,
    /// Lines shown at most.
    max_lines: usize,
    /// Bytes of numbered output at most.
    max_bytes: usize,
}

/// What [`numbered_lines`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Numbered {
    /// The numbered lines, with a closing line when the file goes on.
    Lines(String),
    /// The file ends before the window's first line.
    PastEnd {
        /// Lines in the file.
        lines: usize,
    },
}

#[derive(Debug)]
enum LinesError {
    Cancelled,
    Io(io::Error),
}

impl From<io::Error> for LinesError {
    fn from(e: io::Error) -> Self {
        LinesError::Io(e)
    }
}

/// The lines of `reader` in `window`, `cat -n` style. Reads what it shows
/// and the lines before it, nothing more, and holds at most one line (cut
/// to the byte budget) in memory.
fn numbered_lines<R: BufRead>(
    mut reader: R,
    window: &LineWindow,
    cancel: &CancelFlag,
) -> Result<Numbered, LinesError> {
    let mut number: usize = 1;
    while number < window.offset {
        // Checked now and then: skipping through gigabytes takes a while.
        if number.is_multiple_of(4_096) && cancel.is_raised() {
            return Err(LinesError::Cancelled);
        }
        if reader.skip_until(b'\n')? == 0 {
            return Ok(Numbered::PastEnd { lines: number - 1 });
        }
        number += 1;
    }
    let first = number;
    let mut out = String::new();
    let mut line: Vec<u8> = Vec::new();
    loop {
        let shown = number - first;
        if shown == window.max_lines {
            if !reader.fill_buf()?.is_empty() {
                out.push_str(&format!(
                    "[lines {first}-{} shown; the file goes on: call bash_read with offset={number} to read more]\n",
                    number - 1
                ));
            }
            break;
        }
        let prefix = format!("{number:>6}\t");
        let room = window
            .max_bytes
            .saturating_sub(out.len() + prefix.len() + 1);
        line.clear();
        let read = (&mut reader)
            .take(u64::try_from(room).unwrap_or(u64::MAX).saturating_add(1))
            .read_until(b'\n', &mut line)?;
        if read == 0 {
            if shown == 0 {
                return Ok(Numbered::PastEnd { lines: number - 1 });
            }
            break;
        }
        if !line.ends_with(b"\n") && read > room {
            if shown > 0 {
                out.push_str(&format!(
                    "[lines {first}-{} shown, stopped at the output limit of {} bytes; call bash_read with offset={number} to read more]\n",
                    number - 1,
                    window.max_bytes
                ));
                break;
            }
            // A single line longer than the budget: show its beginning, or
            // the model could never get past it.
            line.truncate(utf8_prefix_len(&line[..room]));
            out.push_str(&prefix);
            out.push_str(&String::from_utf8_lossy(&line));
            out.push('\n');
            out.push_str(&format!(
                "[line {number} is longer than {room} bytes and was cut; call bash_read with offset={} to read on after it]\n",
                number + 1
            ));
            break;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        out.push_str(&prefix);
        out.push_str(&String::from_utf8_lossy(text));
        out.push('\n');
        number += 1;
    }
    Ok(Numbered::Lines(out))
}

/// Length of the longest prefix of `bytes` that does not end inside a
/// multi-byte character cut short (invalid bytes before that are kept).
fn utf8_prefix_len(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        _ => bytes.len(),
    }
}

/// Up to `max` bytes from the start of `file`.
fn read_head(file: &mut File, max: usize) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(max);
    file.take(u64::try_from(max).unwrap_or(u64::MAX))
        .read_to_end(&mut head)?;
    Ok(head)
}

/// A NUL byte, or invalid UTF-8 in more than a quarter of the bytes. Text
/// in a legacy 8-bit encoding stays far below that and is shown replaced.
pub(crate) fn looks_binary(head: &[u8]) -> bool {
    if head.contains(&0) {
        return true;
    }
    let mut invalid = 0usize;
    let mut rest = head;
    while let Err(e) = std::str::from_utf8(rest) {
        match e.error_len() {
            Some(len) => {
                invalid += len;
                rest = &rest[e.valid_up_to() + len..];
            }
            // A character cut by the end of the sample is not an error.
            None => break,
        }
    }
    invalid * 4 > head.len()
}

/// Magic numbers of common binary formats: (offset, bytes, name).
const MAGIC_NUMBERS: &[(usize, &[u8], &str)] = &[
    (0, b"\x89PNG\r\n\x1a\n", "PNG image"),
    (0, b"\xff\xd8\xff", "JPEG image"),
    (0, b"GIF87a", "GIF image"),
    (0, b"GIF89a", "GIF image"),
    (8, b"WEBP", "WebP image"),
    (8, b"WAVE", "WAV audio"),
    (0, b"II*\0", "TIFF image"),
    (0, b"MM\0*", "TIFF image"),
    (0, b"\0\0\x01\0", "ICO icon"),
    (0, b"%PDF-", "PDF document"),
    (0, b"PK\x03\x04", "ZIP archive"),
    (0, b"\x1f\x8b", "gzip archive"),
    (0, b"BZh", "bzip2 archive"),
    (0, b"\xfd7zXZ\0", "xz archive"),
    (0, b"\x28\xb5\x2f\xfd", "zstd archive"),
    (0, b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (257, b"ustar", "tar archive"),
    (0, b"\x7fELF", "ELF executable"),
    (0, b"\xcf\xfa\xed\xfe", "Mach-O executable"),
    (
        0,
        b"\xca\xfe\xba\xbe",
        "Java class or Mach-O universal binary",
    ),
    (0, b"MZ", "Windows executable"),
    (0, b"\0asm", "WebAssembly module"),
    (0, b"SQLite format 3\0", "SQLite database"),
    (
        0,
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
        "Microsoft Office (OLE) document",
    ),
    (0, b"ID3", "MP3 audio"),
    (0, b"OggS", "Ogg media"),
    (0, b"fLaC", "FLAC audio"),
    (4, b"ftyp", "MP4/QuickTime media"),
    (0, b"\x93NUMPY", "NumPy array"),
    (0, b"PAR1", "Parquet file"),
    (0, b"\xff\xfe", "UTF-16 text"),
    (0, b"\xfe\xff", "UTF-16 text"),
];

/// A name for the format of a binary file, from its first bytes.
pub(crate) fn guess_binary_type(head: &[u8]) -> &'static str {
    MAGIC_NUMBERS
        .iter()
        .find(|(offset, magic, _)| head.get(*offset..).is_some_and(|h| h.starts_with(magic)))
        .map_or("binary data", |(_, _, name)| name)
}

/// `12345` as `12,345`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The entries of the open directory `dir`, sorted by name, `/` after
/// directories and `@` after symlinks (which are not followed).
fn list_directory(dir: &OwnedFd, shown: &str, cancel: &CancelFlag) -> io::Result<String> {
    let entries = beneath::entries(dir)?;
    if cancel.is_raised() {
        return Err(io::Error::other("cancelled"));
    }
    let entries: Vec<(std::ffi::OsString, Option<char>)> = entries
        .into_iter()
        .map(|(name, kind)| {
            let marker = match kind {
                EntryKind::Directory => Some('/'),
                EntryKind::Symlink => Some('@'),
                EntryKind::File | EntryKind::Other => None,
            };
            (name, marker)
        })
        .collect();
    if entries.is_empty() {
        return Ok(format!("(`{shown}` is an empty directory)\n"));
    }
    let mut out = format!(
        "`{shown}` is a directory with {} entries (`/` marks a directory, `@` a symlink; hidden entries included):\n",
        entries.len()
    );
    for (name, marker) in entries.iter().take(READ_MAX_LISTED_ENTRIES) {
        out.push_str(&name.to_string_lossy());
        out.extend(marker);
        out.push('\n');
    }
    if entries.len() > READ_MAX_LISTED_ENTRIES {
        out.push_str(&format!(
            "... and {} more (use bash_find with a pattern to narrow down)\n",
            entries.len() - READ_MAX_LISTED_ENTRIES
        ));
    }
    Ok(out)
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
