//! Reading a run's changes out of its layer's upper directory, in
//! overlayfs' format, against the workspace (the lower layer):
//!
//! - a character device 0:0 is a whiteout: the lower path was deleted;
//! - a directory with `user.overlay.opaque = "y"` replaced the lower one:
//!   lower entries it does not hold were deleted;
//! - any other entry is new (absent below and not copied up) or modified
//!   (present below, or copied up from it: deleted below since);
//!   a directory present below with the same mode is only the way to its
//!   entries and no change itself;
//! - a deleted file whose bytes and mode an added file has was renamed.
//!
//! The walk goes by directory descriptors, holds one per level and stops
//! at [`MAX_DEPTH`] levels: what lies deeper is one refused change, so a
//! directory comb cannot exhaust descriptors. It reads the layer and the
//! workspace, and changes nothing but the mode of a layer entry the run
//! made unreadable to its own user (the layer is the run's, and goes).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Dir, Mode, OFlags};
use subagent_protocol::changes::ChangeKind;

use super::beneath::{self, S_IFBLK, S_IFCHR, S_IFDIR, S_IFIFO, S_IFLNK, S_IFREG, file_type};
use super::change::{Change, Node};

/// Deepest directory level read (the same as the `.git` check's).
pub(crate) const MAX_DEPTH: usize = 128;

/// Largest file compared byte for byte to tell a rename from a delete and
/// an add, bytes.
const RENAME_COMPARE_BYTES: u64 = 64 * 1024 * 1024;

/// The overlayfs xattr of a directory that hides the lower one.
const OPAQUE_XATTR: &str = "user.overlay.opaque";

/// The overlayfs xattr of an entry copied up from the lower layer.
const ORIGIN_XATTR: &str = "user.overlay.origin";

/// Every change in `upper` (the layer's upper directory) against `lower`
/// (the workspace), in path order.
pub(crate) fn collect(upper: BorrowedFd<'_>, lower: BorrowedFd<'_>) -> io::Result<Vec<Change>> {
    let mut changes = Vec::new();
    let owned_lower = Some(lower.try_clone_to_owned()?);
    walk(upper, owned_lower.as_ref(), Path::new(""), 0, &mut changes)?;
    changes.sort_by(|a, b| a.path.cmp(&b.path));
    pair_renames(upper, lower, &mut changes);
    Ok(changes)
}

fn walk(
    upper: BorrowedFd<'_>,
    lower: Option<&OwnedFd>,
    rel: &Path,
    depth: usize,
    out: &mut Vec<Change>,
) -> io::Result<()> {
    let mut names: Vec<PathBuf> = Vec::new();
    for entry in Dir::read_from(upper)? {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        names.push(PathBuf::from(OsStr::from_bytes(name)));
    }
    for name in &names {
        let path = rel.join(name);
        let Some(text) = path.to_str().map(str::to_owned) else {
            let mut change = Change::new(
                path.to_string_lossy().into_owned(),
                ChangeKind::Added,
                Node::Special {
                    what: "name".into(),
                },
            );
            change.refused = Some("its name is not UTF-8".into());
            out.push(change);
            continue;
        };
        let Some(stat) = beneath::stat(upper, name)? else {
            continue;
        };
        let below = match lower {
            Some(lower) => beneath::stat(lower, name)?,
            None => None,
        };
        // Copied up from the workspace, yet gone from it now: the
        // workspace deleted it meanwhile, and the change is a modification
        // (a conflict when applied), not a new file that re-creates it.
        let kind = if below.is_some() || was_copied_up(upper, name) {
            ChangeKind::Modified
        } else {
            ChangeKind::Added
        };
        let mode = stat.st_mode & 0o7777;
        match file_type(stat.st_mode) {
            S_IFCHR if stat.st_rdev == 0 => {
                if below.is_some() {
                    out.push(Change::new(text, ChangeKind::Deleted, Node::Gone));
                }
            }
            S_IFDIR => {
                let below_dir = below.filter(|b| file_type(b.st_mode) == S_IFDIR);
                let opaque = is_opaque(upper, name);
                if below.is_none()
                    || below_dir.is_none()
                    || below_dir.is_some_and(|b| b.st_mode & 0o7777 != mode)
                {
                    out.push(Change::new(text.clone(), kind, Node::Dir { mode }));
                }
                if depth + 1 >= MAX_DEPTH {
                    // One refused change for the directory, whether or not
                    // it was a change of its own above.
                    if out.last().is_none_or(|last| last.path != text) {
                        out.push(Change::new(text, kind, Node::Dir { mode }));
                    }
                    if let Some(last) = out.last_mut() {
                        last.refused = Some(format!(
                            "what lies below it is deeper than {MAX_DEPTH} directories, which is \
                             not read"
                        ));
                    }
                    continue;
                }
                let sub_upper = open_readable_dir(upper, name)?;
                let sub_lower = match (below_dir, lower) {
                    (Some(_), Some(lower)) => beneath::open_dir(lower.as_fd(), name).ok(),
                    _ => None,
                };
                if opaque && let Some(sub_lower) = &sub_lower {
                    hidden_below(sub_upper.as_fd(), sub_lower, &path, out)?;
                }
                walk(sub_upper.as_fd(), sub_lower.as_ref(), &path, depth + 1, out)?;
            }
            S_IFREG => out.push(Change::new(
                text,
                kind,
                Node::File {
                    mode,
                    bytes: u64::try_from(stat.st_size).unwrap_or(0),
                },
            )),
            S_IFLNK => {
                let target = rustix::fs::readlinkat(upper, name, Vec::new())?;
                out.push(Change::new(
                    text,
                    kind,
                    Node::Symlink {
                        target: String::from_utf8_lossy(target.to_bytes()).into_owned(),
                    },
                ));
            }
            other => out.push(Change::new(
                text,
                kind,
                Node::Special {
                    what: match other {
                        S_IFIFO => "FIFO",
                        S_IFCHR | S_IFBLK => "device",
                        _ => "socket",
                    }
                    .into(),
                },
            )),
        }
    }
    Ok(())
}

/// Entries of the lower directory an opaque upper directory hides:
/// deleted.
fn hidden_below(
    upper: BorrowedFd<'_>,
    lower: &OwnedFd,
    rel: &Path,
    out: &mut Vec<Change>,
) -> io::Result<()> {
    for entry in Dir::read_from(lower)? {
        let entry = entry?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        if beneath::stat(upper, Path::new(name))?.is_some() {
            continue;
        }
        let path = rel.join(name);
        let text = path.to_string_lossy().into_owned();
        out.push(Change::new(text, ChangeKind::Deleted, Node::Gone));
    }
    Ok(())
}

/// Whether overlayfs copied `name` up from the lower layer (it marks each
/// copy-up with [`ORIGIN_XATTR`]; a tool cannot set that name through the
/// overlay, and a forged mark only makes its own change a conflict).
fn was_copied_up(dir: BorrowedFd<'_>, name: &Path) -> bool {
    let mut path = std::ffi::OsString::from(format!(
        "/proc/self/fd/{}/",
        std::os::fd::AsRawFd::as_raw_fd(&dir)
    ));
    path.push(name.as_os_str());
    let mut value = [0u8; 0];
    match rustix::fs::lgetxattr(Path::new(&path), ORIGIN_XATTR, &mut value[..]) {
        Ok(_) => true,
        // Present, with a value longer than the empty buffer.
        Err(rustix::io::Errno::RANGE) => true,
        Err(_) => false,
    }
}

fn is_opaque(dir: BorrowedFd<'_>, name: &Path) -> bool {
    let Ok(fd) = beneath::open(dir, name, OFlags::PATH | OFlags::DIRECTORY, Mode::empty()) else {
        return false;
    };
    // An O_PATH descriptor has no xattrs of its own; /proc/self/fd does.
    let mut value = [0u8; 8];
    let path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd));
    rustix::fs::getxattr(path.as_str(), OPAQUE_XATTR, &mut value[..])
        .is_ok_and(|n| value[..n] == *b"y")
}

/// The directory `name` in `dir`, made readable to us first when the run
/// took that away.
fn open_readable_dir(dir: BorrowedFd<'_>, name: &Path) -> io::Result<OwnedFd> {
    match beneath::open_dir(dir, name) {
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            rustix::fs::chmodat(dir, name, Mode::from_raw_mode(0o700), AtFlags::empty())?;
            beneath::open_dir(dir, name)
        }
        other => other,
    }
}

/// Opens the regular file `rel` beneath `root` for reading, made readable
/// to us first when the run took that away.
pub(crate) fn open_file(root: BorrowedFd<'_>, rel: &Path) -> io::Result<std::fs::File> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK;
    let fd = match beneath::open(root, rel, flags, Mode::empty()) {
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            let (parent, name) = super::change::split(rel);
            let dir = beneath::open_dir(root, &parent)?;
            let mode = beneath::stat(&dir, &name)?.map_or(0, |s| s.st_mode & 0o7777);
            rustix::fs::chmodat(
                &dir,
                &name,
                Mode::from_raw_mode(mode | 0o400),
                AtFlags::empty(),
            )?;
            beneath::open(root, rel, flags, Mode::empty())?
        }
        other => other?,
    };
    let stat = rustix::fs::fstat(&fd)?;
    if file_type(stat.st_mode) != S_IFREG {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a regular file",
        ));
    }
    Ok(std::fs::File::from(fd))
}

/// Reads `file` whole, up to `limit` bytes (`None` past it).
pub(crate) fn read_up_to(mut file: std::fs::File, limit: u64) -> io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    (&mut file).take(limit + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// Turns each deleted regular file of the workspace whose mode and bytes
/// an added file has into the added file's rename.
pub(crate) fn pair_renames(
    upper: BorrowedFd<'_>,
    lower: BorrowedFd<'_>,
    changes: &mut Vec<Change>,
) {
    let mut deleted: HashMap<u64, Vec<(usize, u32)>> = HashMap::new();
    for (i, change) in changes.iter().enumerate() {
        if change.kind != ChangeKind::Deleted {
            continue;
        }
        let (parent, name) = super::change::split(change.rel());
        let Ok(dir) = beneath::open_dir(lower, &parent) else {
            continue;
        };
        if let Ok(Some(stat)) = beneath::stat(&dir, &name)
            && file_type(stat.st_mode) == S_IFREG
        {
            let bytes = u64::try_from(stat.st_size).unwrap_or(0);
            if bytes <= RENAME_COMPARE_BYTES {
                deleted
                    .entry(bytes)
                    .or_default()
                    .push((i, stat.st_mode & 0o7777));
            }
        }
    }
    if deleted.is_empty() {
        return;
    }
    let mut taken = vec![false; changes.len()];
    for i in 0..changes.len() {
        let change = &changes[i];
        let Node::File { mode, bytes } = change.node else {
            continue;
        };
        if change.kind != ChangeKind::Added || change.refused.is_some() {
            continue;
        }
        let Some(candidates) = deleted.get(&bytes) else {
            continue;
        };
        let Ok(Some(new)) = open_file(upper, change.rel()).and_then(|f| read_up_to(f, bytes))
        else {
            continue;
        };
        for &(d, old_mode) in candidates {
            if taken[d] || old_mode != mode {
                continue;
            }
            let old = open_file(lower, changes[d].rel()).and_then(|f| read_up_to(f, bytes));
            if matches!(old, Ok(Some(ref old)) if *old == new) {
                taken[d] = true;
                changes[i].kind = ChangeKind::Renamed;
                changes[i].from = Some(changes[d].path.clone());
                break;
            }
        }
    }
    let mut index = 0;
    changes.retain(|_| {
        let keep = !taken[index];
        index += 1;
        keep
    });
}
