//! The workspace growth cap of process tools (`--tool-disk`): how much one
//! run's `python_execute` calls may grow the workspace, and the watch that
//! stops a call passing it.
//!
//! Measured as allocated blocks (`st_blocks`), so sparse files count what
//! they hold; symlinks are not followed, other mounts are not entered, and
//! a file with several links counts once. The baseline is the workspace at
//! the run's first process-tool call (the file tools cannot write, so that
//! is the workspace as the run found it); every call measures again before
//! it starts, so what earlier calls wrote or deleted is counted. Growth is
//! the whole workspace's, whoever wrote it: subagents sharing a workspace
//! share what they see of it.
//!
//! During a call [`watch`] measures every [`WATCH_INTERVAL`] (more rarely
//! when one walk takes long: at most a fifth of one core) and returns once
//! the growth passes the cap, or once the tool made a directory the walk
//! cannot read (it could hide files there). The caller kills the tool;
//! the caller also caps each file (RLIMIT_FSIZE) at what is left, so one
//! file cannot outrun the watch.
//!
//! The walk opens each directory beneath its parent's descriptor
//! ([`crate::beneath`], symlinks refused), never by a path a tool could
//! swap or make longer than `PATH_MAX`. This module never deletes or
//! changes anything in the workspace.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use nix::dir::Dir;
use nix::fcntl::{AtFlags, OFlag, open};
use nix::sys::stat::{FileStat, Mode, SFlag, fstat, fstatat};

use crate::beneath;

/// Time between two measurements during a call (100 ms): a tool writing
/// at page-cache speed gets this far past the cap before it is stopped.
pub const WATCH_INTERVAL: Duration = Duration::from_millis(100);

/// A walk may take this share of the time between walks, at most (one in
/// five): a workspace of a million files is measured less often.
const WALK_SHARE: u32 = 5;

/// `st_blocks` counts 512-byte units whatever the filesystem's block size.
const BLOCK_UNIT: u64 = 512;

/// What a walk found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskUsage {
    /// Allocated bytes under the root, the root included.
    pub bytes: u64,
    /// Directories that could not be opened (their contents are not
    /// counted).
    pub unreadable_dirs: u64,
}

/// Why a call was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breach {
    /// The workspace grew past the cap: by this many bytes.
    Grew(u64),
    /// The tool made directories the walk cannot open: this many more.
    Hidden(u64),
}

/// One run's growth cap and the workspace as the run found it; cheap to
/// clone, shared by every call of the run.
#[derive(Debug, Clone)]
pub struct WorkspaceGrowth {
    cap: u64,
    baseline: Arc<Mutex<Option<DiskUsage>>>,
}

impl PartialEq for WorkspaceGrowth {
    /// The same cap over the same baseline (the same run).
    fn eq(&self, other: &Self) -> bool {
        self.cap == other.cap && Arc::ptr_eq(&self.baseline, &other.baseline)
    }
}

impl Eq for WorkspaceGrowth {}

/// Where a call starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallStart {
    /// The workspace when the run began.
    pub baseline: DiskUsage,
    /// The workspace now.
    pub now: DiskUsage,
    /// The run's cap, bytes.
    pub cap: u64,
}

impl CallStart {
    /// How much the run has grown the workspace so far (0 when it shrank).
    pub fn grown(&self) -> u64 {
        self.now.bytes.saturating_sub(self.baseline.bytes)
    }

    /// How much more it may grow.
    pub fn remaining(&self) -> u64 {
        self.cap.saturating_sub(self.grown())
    }
}

impl WorkspaceGrowth {
    /// A run's cap of `cap` bytes; the baseline is taken at the first call.
    pub fn new(cap: u64) -> Self {
        Self {
            cap,
            baseline: Arc::default(),
        }
    }

    /// The cap, bytes.
    pub fn cap(&self) -> u64 {
        self.cap
    }

    /// Measures `root` before a call; the first call's measurement is the
    /// run's baseline.
    pub async fn start_call(&self, root: &Path) -> std::io::Result<CallStart> {
        let now = measure_blocking(root.to_owned()).await?;
        let mut baseline = self.baseline.lock().unwrap_or_else(PoisonError::into_inner);
        let baseline = *baseline.get_or_insert(now);
        Ok(CallStart {
            baseline,
            now,
            cap: self.cap,
        })
    }
}

/// Measures `root` until the growth over `start.baseline` passes
/// `start.cap` or the tool hid a directory; then returns why. A walk that
/// fails (the workspace gone) is tried again at the next tick.
pub async fn watch(root: PathBuf, start: CallStart) -> Breach {
    let mut pause = WATCH_INTERVAL;
    loop {
        tokio::time::sleep(pause).await;
        let began = Instant::now();
        let Ok(now) = measure_blocking(root.clone()).await else {
            continue;
        };
        if let Some(breach) = breach(&start, &now) {
            return breach;
        }
        pause = WATCH_INTERVAL.max(began.elapsed() * WALK_SHARE);
    }
}

/// The breach `now` shows against `start`, if any.
pub fn breach(start: &CallStart, now: &DiskUsage) -> Option<Breach> {
    let grown = now.bytes.saturating_sub(start.baseline.bytes);
    if grown > start.cap {
        return Some(Breach::Grew(grown));
    }
    let hidden = now
        .unreadable_dirs
        .saturating_sub(start.now.unreadable_dirs);
    (hidden > 0).then_some(Breach::Hidden(hidden))
}

async fn measure_blocking(root: PathBuf) -> std::io::Result<DiskUsage> {
    tokio::task::spawn_blocking(move || measure(&root))
        .await
        .map_err(std::io::Error::other)?
}

/// Walks `root` (blocking): allocated bytes and unreadable directories.
pub fn measure(root: &Path) -> std::io::Result<DiskUsage> {
    let root_fd = open(root, DIR_FLAGS, Mode::empty())?;
    let root_stat = fstat(&root_fd)?;
    let mut walk = Walk {
        device: root_stat.st_dev,
        usage: DiskUsage {
            bytes: blocks(&root_stat),
            ..DiskUsage::default()
        },
        linked: HashSet::new(),
        pending: Vec::new(),
    };
    walk.read(root_fd);
    // Depth first: a child is opened beneath its parent's descriptor when
    // its turn comes, so open descriptors stay one per level being walked.
    while let Some((parent, name)) = walk.pending.pop() {
        match beneath::open_directory(&*parent, &name) {
            Ok(fd) => {
                drop(parent);
                walk.read(fd);
            }
            // A kernel without openat2: refused, as the file tools refuse it,
            // rather than measured short.
            Err(e) if e.kind() == std::io::ErrorKind::Unsupported => return Err(e),
            // Renamed, deleted or swapped for a symlink since it was listed.
            Err(e) if vanished(&e) => {}
            Err(_) => walk.usage.unreadable_dirs += 1,
        }
    }
    Ok(walk.usage)
}

/// Whether opening a listed directory failed because it is no longer one.
fn vanished(error: &std::io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP)
    )
}

/// `open` flags of the walk's root: never through a symlink. The
/// directories under it are opened by [`beneath::open_directory`].
const DIR_FLAGS: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_CLOEXEC)
    .union(OFlag::O_NOFOLLOW);

/// One walk's state.
struct Walk {
    device: u64,
    usage: DiskUsage,
    /// Files with more than one link, counted once.
    linked: HashSet<(u64, u64)>,
    /// Subdirectories still to read: the parent's descriptor and the name.
    pending: Vec<(Arc<OwnedFd>, OsString)>,
}

impl Walk {
    /// Counts every entry of the directory `fd` and queues its subdirectories.
    fn read(&mut self, fd: OwnedFd) {
        let Ok(for_children) = fd.try_clone().map(Arc::new) else {
            self.usage.unreadable_dirs += 1;
            return;
        };
        let Ok(mut dir) = Dir::from_fd(fd) else {
            self.usage.unreadable_dirs += 1;
            return;
        };
        for entry in dir.iter() {
            let Ok(entry) = entry else {
                self.usage.unreadable_dirs += 1;
                return;
            };
            let name = entry.file_name();
            if name.to_bytes() == b"." || name.to_bytes() == b".." {
                continue;
            }
            // Gone since it was listed (a tool deleting): nothing to count.
            let Ok(stat) = fstatat(&*for_children, name, AtFlags::AT_SYMLINK_NOFOLLOW) else {
                continue;
            };
            // Another filesystem mounted here is not the workspace's.
            if stat.st_dev != self.device {
                continue;
            }
            let is_dir = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR;
            if !is_dir && stat.st_nlink > 1 && !self.linked.insert((stat.st_dev, stat.st_ino)) {
                continue;
            }
            self.usage.bytes = self.usage.bytes.saturating_add(blocks(&stat));
            if is_dir {
                let name = OsStr::from_bytes(name.to_bytes()).to_owned();
                self.pending.push((Arc::clone(&for_children), name));
            }
        }
    }
}

fn blocks(stat: &FileStat) -> u64 {
    u64::try_from(stat.st_blocks)
        .unwrap_or(0)
        .saturating_mul(BLOCK_UNIT)
}

#[cfg(test)]
#[path = "disk_tests.rs"]
mod tests;
