//! The workspace a run is admitted with: decided once, at admission, and
//! held to from then on.
//!
//! [`admit`] makes the asked path absolute (from the supervisor's working
//! directory: a relative `--workspace` means what it says where the
//! operator typed it), canonical, and checks it against what the
//! supervisor reads back ([`HostFiles`]); the run then carries the
//! canonical path and the directory's identity. When the worker starts,
//! [`AdmittedWorkspace::open`] opens the path again and refuses a
//! directory that is not the admitted one (a component swapped for a
//! symlink since: the attack of an MCP call's workspace renamed away by
//! another call's tool); the worker is started in it by that descriptor.
//!
//! Checks and opens; creates nothing.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::config::HostFiles;

/// A workspace that passed admission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AdmittedWorkspace {
    /// Absolute and canonical.
    pub(crate) path: PathBuf,
    /// The operator's files in it, for the tool sandbox to keep read-only.
    pub(crate) protected: Vec<PathBuf>,
    dev: u64,
    ino: u64,
}

/// Checks `asked` as a run's workspace; the refusal says why and what to
/// do instead.
pub(crate) fn admit(asked: &Path, host: &HostFiles) -> Result<AdmittedWorkspace, String> {
    let unusable = |e: io::Error| {
        format!(
            "the workspace {} cannot be used: {e}; give an existing directory",
            asked.display()
        )
    };
    let absolute = std::path::absolute(asked).map_err(unusable)?;
    let path = std::fs::canonicalize(&absolute).map_err(unusable)?;
    let meta = std::fs::metadata(&path).map_err(unusable)?;
    if !meta.is_dir() {
        return Err(format!(
            "the workspace {} is not a directory; give a directory",
            asked.display()
        ));
    }
    let admitted = host.check(&path)?;
    Ok(AdmittedWorkspace {
        path,
        protected: admitted.protected,
        dev: meta.dev(),
        ino: meta.ino(),
    })
}

impl AdmittedWorkspace {
    /// The admitted directory, opened by its path now: refused when the
    /// path leads to another directory than the one admitted.
    pub(crate) fn open(&self) -> Result<OwnedFd, String> {
        let opened = std::fs::File::open(&self.path).and_then(|dir| {
            let meta = dir.metadata()?;
            Ok((OwnedFd::from(dir), meta))
        });
        match opened {
            Ok((fd, meta)) if meta.is_dir() && meta.dev() == self.dev && meta.ino() == self.ino => {
                Ok(fd)
            }
            Ok(_) => Err(format!(
                "the workspace {} was replaced after the run was admitted (its path now leads to \
                 another directory); nothing was started",
                self.path.display()
            )),
            Err(e) => Err(format!(
                "the workspace {} cannot be opened any more: {e}; nothing was started",
                self.path.display()
            )),
        }
    }

    /// Whether `fd` is the admitted directory.
    #[cfg(test)]
    pub(crate) fn is(&self, fd: &OwnedFd) -> bool {
        std::fs::File::from(fd.try_clone().unwrap())
            .metadata()
            .is_ok_and(|m| m.dev() == self.dev && m.ino() == self.ino)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_workspace_is_made_absolute_and_canonical() {
        let dir = tempfile::tempdir().unwrap();
        let host = HostFiles::default();
        let real = dir.path().canonicalize().unwrap();
        let admitted = admit(dir.path(), &host).unwrap();
        assert_eq!(admitted.path, real);
        let file = real.join("f");
        std::fs::write(&file, "").unwrap();
        assert!(admit(&file, &host).unwrap_err().contains("not a directory"));
        assert!(
            admit(&real.join("missing"), &host)
                .unwrap_err()
                .contains("cannot be used")
        );
    }

    #[test]
    fn a_workspace_swapped_after_admission_is_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        let admitted = admit(&root.join("sub"), &HostFiles::default()).unwrap();
        assert!(admitted.is(&admitted.open().unwrap()));
        std::fs::rename(root.join("sub"), root.join("sub.admitted")).unwrap();
        std::os::unix::fs::symlink(root.join("outside"), root.join("sub")).unwrap();
        let refused = admitted.open().unwrap_err();
        assert!(refused.contains("was replaced"), "{refused}");
    }
}
