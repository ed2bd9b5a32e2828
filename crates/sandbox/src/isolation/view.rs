//! The filesystem view of a tool process, planned before the fork: what the
//! fresh root holds and in which order it is built.
//!
//! The tool's root is a tmpfs holding nothing but read-only binds of the
//! system paths it needs, its writable roots (the workspace) bound
//! read-write at their own absolute paths with what the host trusts in
//! them kept out of reach ([`super::view_protect`]), a private size-capped
//! `/tmp`, a minimal `/dev` whose nodes are bound read-only (writing to a
//! device works on a read-only mount; chmod and utime of the host's node
//! do not) and a fresh `/proc`. What
//! is not bound does not exist: no `/run`, `/var`, `/home`, host `/tmp`,
//! `/sys` or host sockets, so chmod, utime, xattr, stat, inotify and
//! `connect` on them find nothing (bubblewrap's `--ro-bind`/`--tmpfs`/
//! `--dev`/`--proc`, and systemd's `ProtectSystem=strict`, `PrivateTmp`,
//! `PrivateDevices`).
//!
//! A working directory the caller opened and checked (a pinned workspace)
//! is bound from the child's own working directory, which the child
//! entered by that descriptor, not by its path: a component of the path
//! swapped for a symlink after the check does not move the bind.
//!
//! This module only decides: [`ViewPlan::new`] looks at the host (lstat,
//! canonical paths) and turns the [`Isolation`] into a list of [`Op`]s with
//! every path already a `CString`. The in-child builder
//! ([`super::view_build`]) runs them without allocating. The decision is a
//! pure function of what the host looks like ([`plan_ops`]), tested without
//! processes in `view_tests.rs`.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use super::config::Isolation;
pub(crate) use super::view_mount::{BindFrom, BindMode, Kind, Mount};
use super::view_protect::root_protections;

/// Where the old root is reachable while the new one is built (bubblewrap's
/// name): sources are read under it.
pub(crate) const OLD_ROOT: &str = "/oldroot";
/// The resolver configuration, replaced with the private network's.
const RESOLV_CONF: &str = "/etc/resolv.conf";
/// Where the new root is built; targets are written under it.
pub(crate) const NEW_ROOT: &str = "/newroot";

/// One step of building the view. Paths are full paths in the child:
/// targets under [`NEW_ROOT`], sources under [`OLD_ROOT`] (or [`NEW_ROOT`]
/// for a bind of something already in the view over itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Op {
    /// mkdir, an existing directory is fine.
    Dir {
        path: CString,
        mode: u32,
    },
    /// An empty file to bind a file over; an existing one is fine.
    File {
        path: CString,
    },
    Symlink {
        target: CString,
        link: CString,
    },
    Bind {
        source: CString,
        target: CString,
        mode: BindMode,
    },
    Tmpfs {
        target: CString,
        options: CString,
    },
    /// An empty read-only tmpfs on a directory made for it (on the host,
    /// since it lies in a writable root): the name stays taken while the
    /// tool runs. Skipped when the directory cannot be made (the tool could
    /// not make it either).
    Placeholder {
        path: CString,
    },
    Proc {
        target: CString,
    },
}

/// The view of one child, ready for the in-child builder.
#[derive(Debug, Clone)]
pub(crate) struct ViewPlan {
    pub(crate) ops: Vec<Op>,
    /// The working directory, chdir'd to again inside the view.
    pub(crate) cwd: CString,
    /// Host paths of the placeholders the child makes; whoever waits for
    /// the child removes them (when still empty) once it is gone.
    pub(crate) placeholders: Vec<PathBuf>,
}

impl ViewPlan {
    /// The view for `isolation`, looking at the host now; `cwd` must lie
    /// inside it (`None`: a forecast, for a status report). With
    /// `cwd_pinned`, the child enters `cwd` by a descriptor before the view
    /// is built, and the writable root at `cwd` is bound from there.
    pub(crate) fn new(
        isolation: &Isolation,
        cwd: Option<&Path>,
        cwd_pinned: bool,
    ) -> io::Result<Self> {
        let pinned = cwd.filter(|_| cwd_pinned);
        let mounts = plan_mounts(isolation, &lstat, pinned);
        let cwd = cwd.unwrap_or(Path::new("/"));
        if cwd != Path::new("/") && !mounts.iter().any(|m| reaches(m, cwd)) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "the working directory {} is not inside the tool's filesystem view; make it \
                     one of the writable roots",
                    cwd.display()
                ),
            ));
        }
        let placeholders = mounts
            .iter()
            .filter_map(|m| match m {
                Mount::Placeholder { target } => Some(target.clone()),
                _ => None,
            })
            .collect();
        Ok(Self {
            ops: plan_ops(&mounts)?,
            cwd: c_path(cwd)?,
            placeholders,
        })
    }
}

/// Whether `path` is inside what `mount` puts into the view.
fn reaches(mount: &Mount, path: &Path) -> bool {
    match mount {
        Mount::Bind { is_dir: true, .. } | Mount::PrivateDir { .. } => {
            path.starts_with(mount.target())
        }
        // The shared /tmp holds only what is bound or made in it.
        Mount::Tmpfs { target, .. } => target != Path::new("/tmp") && path.starts_with(target),
        _ => false,
    }
}

/// The mounts of the view, sorted so that every target comes after the
/// mounts of its ancestors. `kind` says what a host path is; `pinned` is
/// the working directory the child enters by a descriptor, if any.
pub(crate) fn plan_mounts(
    isolation: &Isolation,
    kind: &dyn Fn(&Path) -> Kind,
    pinned: Option<&Path>,
) -> Vec<Mount> {
    let private_tmp = isolation.private_tmp.as_deref();
    let read_write: Vec<&Path> = isolation
        .read_write
        .iter()
        .map(PathBuf::as_path)
        .filter(|p| Some(*p) != private_tmp)
        .collect();
    let read_only: Vec<&Path> = isolation.read_only.iter().map(PathBuf::as_path).collect();
    let all: Vec<&Path> = read_only.iter().chain(&read_write).copied().collect();
    let covered = |resolved: &Path| all.iter().any(|p| resolved.starts_with(p));

    let mut mounts = vec![Mount::Tmpfs {
        target: PathBuf::from("/tmp"),
        bytes: isolation.tmp_bytes,
        mode: 0o1777,
    }];
    for (paths, mode) in [
        (&read_only, BindMode::ReadOnly),
        (&read_write, BindMode::ReadWrite),
    ] {
        for (i, path) in paths.iter().enumerate() {
            // Inside another path of the same list: bound with it already.
            let inside_other = paths
                .iter()
                .enumerate()
                .any(|(j, other)| j != i && path.starts_with(other) && (path != other || j < i));
            if !path.is_absolute() || inside_other {
                continue;
            }
            let bind = |source: &Path, is_dir: bool, mode: BindMode| Mount::Bind {
                source: source.to_owned(),
                target: path.to_path_buf(),
                mode,
                is_dir,
                from: BindFrom::Host,
            };
            // The pinned working directory is a directory whatever its path
            // leads to now: the child binds what it entered.
            let is_pinned = mode == BindMode::ReadWrite && pinned == Some(*path);
            let path_kind = if is_pinned { Kind::Dir } else { kind(path) };
            match path_kind.clone() {
                _ if is_pinned => mounts.push(Mount::Bind {
                    source: PathBuf::new(),
                    target: path.to_path_buf(),
                    mode,
                    is_dir: true,
                    from: BindFrom::Cwd,
                }),
                Kind::Missing | Kind::Symlink { resolved: None, .. } => {}
                Kind::Dir => mounts.push(bind(path, true, mode)),
                Kind::File => mounts.push(bind(path, false, mode)),
                Kind::Device => mounts.push(bind(path, false, BindMode::Device)),
                Kind::Symlink {
                    target,
                    resolved: Some(resolved),
                } => {
                    if covered(&resolved) {
                        mounts.push(Mount::Symlink {
                            target,
                            link: path.to_path_buf(),
                        });
                    } else {
                        match kind(&resolved) {
                            Kind::Dir => mounts.push(bind(&resolved, true, mode)),
                            Kind::File => mounts.push(bind(&resolved, false, mode)),
                            Kind::Device => {
                                mounts.push(bind(&resolved, false, BindMode::Device));
                            }
                            _ => {}
                        }
                    }
                }
            }
            if mode == BindMode::ReadWrite && path_kind == Kind::Dir {
                mounts.extend(root_protections(path, &isolation.protected, kind));
            }
        }
    }
    if let Some(tmp) = private_tmp.filter(|p| p.is_absolute()) {
        mounts.push(if tmp.starts_with("/tmp") && tmp != Path::new("/tmp") {
            Mount::PrivateDir {
                target: tmp.to_owned(),
            }
        } else {
            Mount::Tmpfs {
                target: tmp.to_owned(),
                bytes: isolation.tmp_bytes,
                mode: 0o700,
            }
        });
    }
    for (name, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        mounts.push(Mount::Symlink {
            target: PathBuf::from(target),
            link: Path::new("/dev").join(name),
        });
    }
    mounts.push(Mount::Proc {
        target: PathBuf::from("/proc"),
    });
    if let Some(network) = &isolation.private_network {
        // The private network's resolver is its stack's forwarder, not the
        // host's (which may be a loopback address of the host).
        let target = Path::new(RESOLV_CONF);
        mounts.retain(|m| m.target() != target);
        mounts.push(Mount::Bind {
            source: network.resolv_conf().to_owned(),
            target: target.to_owned(),
            mode: BindMode::ReadOnly,
            is_dir: false,
            from: BindFrom::Host,
        });
    }
    // Stable: for one target, the order above (a tmpfs before a bind over
    // it) holds; `Path` orders a parent before everything below it.
    mounts.sort_by(|a, b| a.target().cmp(b.target()));
    mounts
}

/// The in-child steps for `mounts`: each mount preceded by the directories
/// that lead to it and its mount point.
pub(crate) fn plan_ops(mounts: &[Mount]) -> io::Result<Vec<Op>> {
    let mut ops = Vec::new();
    let mut made: BTreeSet<PathBuf> = BTreeSet::new();
    let new_root = |p: &Path| under(NEW_ROOT, p);
    let mut dir = |ops: &mut Vec<Op>, path: &Path, mode: u32| -> io::Result<()> {
        if made.insert(path.to_owned()) {
            ops.push(Op::Dir {
                path: new_root(path)?,
                mode,
            });
        }
        Ok(())
    };
    for mount in mounts {
        let target = mount.target();
        let ancestors: Vec<&Path> = target
            .ancestors()
            .skip(1)
            .filter(|a| *a != Path::new("/"))
            .collect();
        for ancestor in ancestors.into_iter().rev() {
            dir(&mut ops, ancestor, 0o755)?;
        }
        match mount {
            Mount::Bind {
                source,
                target,
                mode,
                is_dir,
                from,
            } => {
                if *is_dir {
                    dir(&mut ops, target, 0o755)?;
                } else {
                    ops.push(Op::File {
                        path: new_root(target)?,
                    });
                }
                let source = match from {
                    BindFrom::Host => under(OLD_ROOT, source)?,
                    BindFrom::View => new_root(source)?,
                    BindFrom::Cwd => c".".to_owned(),
                };
                ops.push(Op::Bind {
                    source,
                    target: new_root(target)?,
                    mode: *mode,
                });
            }
            Mount::Symlink { target, link } => ops.push(Op::Symlink {
                target: c_path(target)?,
                link: new_root(link)?,
            }),
            Mount::Tmpfs {
                target,
                bytes,
                mode,
            } => {
                dir(&mut ops, target, 0o755)?;
                ops.push(Op::Tmpfs {
                    target: new_root(target)?,
                    options: CString::new(format!("size={bytes},mode={mode:o}"))?,
                });
            }
            Mount::PrivateDir { target } => dir(&mut ops, target, 0o700)?,
            Mount::Placeholder { target } => ops.push(Op::Placeholder {
                path: new_root(target)?,
            }),
            Mount::Proc { target } => {
                dir(&mut ops, target, 0o555)?;
                ops.push(Op::Proc {
                    target: new_root(target)?,
                });
            }
        }
    }
    Ok(ops)
}

/// `root` followed by the absolute `path`.
fn under(root: &str, path: &Path) -> io::Result<CString> {
    let mut bytes = root.as_bytes().to_vec();
    bytes.extend_from_slice(path.as_os_str().as_bytes());
    CString::new(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

/// What `path` is on this host.
fn lstat(path: &Path) -> Kind {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Kind::Missing;
    };
    let file_type = meta.file_type();
    if file_type.is_symlink() {
        return match std::fs::read_link(path) {
            Ok(target) => Kind::Symlink {
                target,
                resolved: std::fs::canonicalize(path).ok(),
            },
            Err(_) => Kind::Missing,
        };
    }
    if file_type.is_dir() {
        Kind::Dir
    } else if file_type.is_char_device() || file_type.is_block_device() {
        Kind::Device
    } else {
        Kind::File
    }
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
