//! Every place a path's resolution passes through: the location of each
//! symlink it follows, and where it ends (with the part that does not
//! exist yet appended as written).
//!
//! Whether a workspace holds a file the supervisor reads back is a
//! question about all of these, not only the canonical path: with
//! `~/.config` a symlink that lies in the workspace, a tool can point it
//! elsewhere, though the config dir's canonical path is outside.
//!
//! Reads the filesystem (lstat, readlink); changes nothing.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Symlinks followed at most, as the kernel's own limit (40).
const MAX_LINKS: usize = 40;

/// One step still to resolve.
enum Step {
    Root,
    Parent,
    Name(OsString),
}

/// The locations `path` (absolute) resolves through: each symlink's own
/// location, then the final path. A part that does not exist ends the
/// resolution of links; the rest is appended as written.
pub(crate) fn trail(path: &Path) -> Vec<PathBuf> {
    let mut pending: Vec<Step> = steps(path);
    pending.reverse();
    let mut out = Vec::new();
    let mut current = PathBuf::from("/");
    let mut links = 0;
    while let Some(step) = pending.pop() {
        match step {
            Step::Root => current = PathBuf::from("/"),
            Step::Parent => {
                current.pop();
            }
            Step::Name(name) => {
                let next = current.join(&name);
                let link = std::fs::symlink_metadata(&next)
                    .is_ok_and(|m| m.file_type().is_symlink())
                    .then(|| std::fs::read_link(&next).ok())
                    .flatten();
                match link {
                    Some(target) if links < MAX_LINKS => {
                        links += 1;
                        out.push(next);
                        // Relative targets resolve from the link's directory,
                        // which `current` still is.
                        let mut more = steps(&target);
                        more.reverse();
                        pending.extend(more);
                    }
                    _ => current = next,
                }
            }
        }
    }
    out.push(current);
    out
}

fn steps(path: &Path) -> Vec<Step> {
    path.components()
        .filter_map(|c| match c {
            Component::RootDir => Some(Step::Root),
            Component::ParentDir => Some(Step::Parent),
            Component::Normal(name) => Some(Step::Name(name.to_owned())),
            Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_link_on_the_way_is_named_and_a_missing_tail_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("real/inner")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("abs-link")).unwrap();
        std::os::unix::fs::symlink("abs-link/inner", root.join("rel-link")).unwrap();
        let found = trail(&root.join("rel-link/missing/file"));
        assert_eq!(
            found,
            vec![
                root.join("rel-link"),
                root.join("abs-link"),
                root.join("real/inner/missing/file"),
            ]
        );
        assert_eq!(trail(&root.join("real/../real")), vec![root.join("real")]);
    }

    #[test]
    fn a_link_loop_ends() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(root.join("b"), root.join("a")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("b")).unwrap();
        let found = trail(&root.join("a"));
        assert_eq!(found.len(), MAX_LINKS + 1);
    }
}
