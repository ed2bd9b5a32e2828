//! Finds the cgroup this process lives in, per controller, and decides
//! whether per-child cgroups with memory and pids caps can be made under it.
//!
//! Reads `/proc/self/cgroup` and `/proc/self/mountinfo` and checks
//! writability; it never creates, writes or moves anything, except that
//! [`cgroup_support_cached`], as the first child's cgroup is planned, moves
//! this process into the leaf of a delegated v2 cgroup ([`super::delegate`]).

use std::fs;
use std::path::{Path, PathBuf};

use super::delegate::{self, CgroupFacts, KernelFacts};
use super::kind::CgroupKind;

/// Whether per-child cgroups with memory and pids caps can be made here, and
/// where; the error says why not and what to do. A delegated v2 cgroup is
/// reported with the leaf this process would move into; nothing moves.
pub fn cgroup_support() -> Result<CgroupKind, String> {
    let own = read("/proc/self/cgroup")?;
    let mounts = read("/proc/self/mountinfo")?;
    decide(&own, &mounts, &KernelFacts)
}

/// [`cgroup_support`] over the texts of `/proc/self/cgroup` and
/// `/proc/self/mountinfo` and the facts `facts` gives about cgroupfs.
pub(crate) fn decide(
    own_cgroups: &str,
    mountinfo: &str,
    facts: &impl CgroupFacts,
) -> Result<CgroupKind, String> {
    match locate(own_cgroups, mountinfo)? {
        CgroupKind::V1 {
            memory,
            pids,
            freezer,
        } => {
            writable(&memory, facts)?;
            writable(&pids, facts)?;
            let freezer = freezer.filter(|f| facts.writable(f).is_ok());
            Ok(CgroupKind::V1 {
                memory,
                pids,
                freezer,
            })
        }
        CgroupKind::V2 { dir, .. } => delegate::place_v2(dir, facts),
    }
}

static FOUND: std::sync::OnceLock<Result<CgroupKind, String>> = std::sync::OnceLock::new();

/// The hierarchy this process made children's cgroups in, if it looked for
/// one: `None` in a process that never made a child's cgroup (the end of a
/// program asks without wanting the search done then).
pub(crate) fn cgroup_kind_if_found() -> Option<CgroupKind> {
    FOUND.get().and_then(|found| found.as_ref().ok().cloned())
}

/// [`cgroup_support`] as first found in this process: every child's plan
/// needs it, and reading `/proc/self/mountinfo` and checking writability
/// each time costs more than the rest of the plan. A process moved to
/// another cgroup after its first child keeps making children's cgroups
/// under the old one, which still caps them.
///
/// Where our v2 cgroup is delegated to us with us inside it, the first call
/// moves this process into its leaf and hands memory and pids down
/// ([`delegate::adopt`]); when that fails, the error is the answer for the
/// whole process (children then get the RLIMIT_DATA fallback).
pub(crate) fn cgroup_support_cached() -> Result<CgroupKind, String> {
    FOUND
        .get_or_init(|| {
            let kind = cgroup_support()?;
            if let CgroupKind::V2 {
                dir,
                leaf: Some(leaf),
            } = &kind
            {
                delegate::adopt(dir, leaf, &KernelFacts)?;
                tracing::debug!(
                    cgroup = %dir.display(),
                    leaf = %leaf.display(),
                    "moved into a leaf of our delegated cgroup v2, to make children's cgroups beside it"
                );
            }
            Ok(kind)
        })
        .clone()
}

/// Picks the hierarchy from the texts of `/proc/self/cgroup` and
/// `/proc/self/mountinfo`: v1 when both the memory and pids controllers are
/// mounted as v1 (a controller lives in one hierarchy only), with the v1
/// freezer where it is mounted too, else v2.
pub(crate) fn locate(own_cgroups: &str, mountinfo: &str) -> Result<CgroupKind, String> {
    let mounts: Vec<Mount> = mountinfo.lines().filter_map(Mount::parse).collect();
    let v1_dir = |controller: &str| -> Option<Result<PathBuf, String>> {
        let mount = mounts
            .iter()
            .find(|m| m.fstype == "cgroup" && m.super_options.iter().any(|o| o == controller))?;
        let own = own_cgroups.lines().find_map(|line| {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            controllers
                .split(',')
                .any(|c| c == controller)
                .then_some(path)
        })?;
        Some(mount.resolve(own))
    };
    if let (Some(memory), Some(pids)) = (v1_dir("memory"), v1_dir("pids")) {
        return Ok(CgroupKind::V1 {
            memory: memory?,
            pids: pids?,
            // Optional: a freezer we cannot place is one we do without.
            freezer: v1_dir("freezer").and_then(Result::ok),
        });
    }
    let unified = mounts.iter().find(|m| m.fstype == "cgroup2");
    let own = own_cgroups
        .lines()
        .find_map(|line| line.strip_prefix("0::"));
    match (unified, own) {
        (Some(mount), Some(own)) => Ok(CgroupKind::V2 {
            dir: mount.resolve(own)?,
            leaf: None,
        }),
        _ => Err(
            "no cgroup hierarchy with the memory and pids controllers is mounted \
                  (neither cgroup v1 memory+pids nor cgroup v2); mount cgroup2 at /sys/fs/cgroup \
                  or run without memory and pids caps"
                .to_string(),
        ),
    }
}

/// One line of `/proc/self/mountinfo`, the fields we need.
#[derive(Debug)]
struct Mount {
    root: String,
    mount_point: String,
    fstype: String,
    super_options: Vec<String>,
}

impl Mount {
    fn parse(line: &str) -> Option<Mount> {
        let (before, after) = line.split_once(" - ")?;
        let fields: Vec<&str> = before.split(' ').collect();
        let mut tail = after.split(' ');
        let fstype = tail.next()?.to_string();
        let _source = tail.next()?;
        let super_options = tail.next()?.split(',').map(str::to_string).collect();
        Some(Mount {
            root: unescape(fields.get(3)?),
            mount_point: unescape(fields.get(4)?),
            fstype,
            super_options,
        })
    }

    /// Our cgroup path (as `/proc/self/cgroup` shows it) inside this mount.
    fn resolve(&self, own: &str) -> Result<PathBuf, String> {
        let relative = if self.root == "/" {
            Some(own)
        } else {
            own.strip_prefix(self.root.as_str())
                .filter(|rest| rest.is_empty() || rest.starts_with('/'))
        };
        match relative {
            Some(rest) => Ok(Path::new(&self.mount_point).join(rest.trim_start_matches('/'))),
            None => Err(format!(
                "our cgroup {own} is outside the cgroup mount at {} (mount root {}); \
                 mount the hierarchy so our cgroup is visible",
                self.mount_point, self.root
            )),
        }
    }
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() {
            let digits = std::str::from_utf8(&bytes[i + 1..i + 4]).unwrap_or("");
            if let Ok(value) = u8::from_str_radix(digits, 8) {
                out.push(value);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn read(path: impl AsRef<Path>) -> Result<String, String> {
    let path = path.as_ref();
    fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn writable(dir: &Path, facts: &impl CgroupFacts) -> Result<(), String> {
    facts.writable(dir).map_err(|e| {
        format!(
            "cgroup directory {} is not writable ({e}); run the supervisor as a user who \
             owns its cgroup, e.g. under `systemd-run --user --scope -p Delegate=yes`",
            dir.display()
        )
    })
}

#[cfg(test)]
#[path = "discover_tests.rs"]
mod tests;
