//! A run's changes kept for later: `<sessions dir>/layers/<runId>/`, a
//! `manifest.json` (the changes, the run's start, its workspace, its
//! protected paths, what was applied) and `blobs/<n>`, the new content of
//! the n-th change. Written when a completed run's changes were not all
//! applied (`--apply never`, or conflicts); read by `subagent diff` and
//! `subagent apply`, removed by `sessions gc` with its run and once every
//! change is applied.
//!
//! The manifest is read back as untrusted input (size-capped, no links
//! followed) and its changes judged again by the policy: a manifest
//! cannot make a refused change applicable.

use std::collections::HashMap;
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{Mode, OFlags};
use serde::{Deserialize, Serialize};
use subagent_protocol::changes::Changes;

use super::apply::{Applied, apply};
use super::change::{Change, Contents};
use super::policy;
use crate::untrusted_file::read_capped_string;

/// Largest manifest read back, bytes.
const MANIFEST_CAP: u64 = 64 * 1024 * 1024;

/// Version written in a manifest.
const MANIFEST_VERSION: u32 = 1;

pub use subagent_session::paths::layers_dir;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    version: u32,
    run_id: String,
    workspace: String,
    since_secs: u64,
    since_nanos: u32,
    protected: Vec<String>,
    changes: Vec<Change>,
}

/// Why a kept layer cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum KeptLayerError {
    /// No kept layer of that run.
    #[error(
        "no kept changes of run {run_id} in {}: its changes were applied, discarded (the run did \
         not complete), or removed by `sessions gc`",
        dir.display()
    )]
    NotFound {
        /// The run.
        run_id: String,
        /// Where they were looked for.
        dir: PathBuf,
    },
    /// The manifest or a file could not be read or written.
    #[error("kept changes of run {run_id}: {reason}")]
    Unusable {
        /// The run.
        run_id: String,
        /// What went wrong.
        reason: String,
    },
}

/// A run's kept changes.
#[derive(Debug)]
pub struct KeptLayer {
    dir: PathBuf,
    manifest: Manifest,
}

/// Where a kept layer's new contents are read from.
struct Blobs<'a> {
    dir: &'a Path,
    index: HashMap<&'a str, usize>,
}

impl Contents for Blobs<'_> {
    fn open(&self, change: &Change) -> io::Result<std::fs::File> {
        let n = self
            .index
            .get(change.path.as_str())
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        let dir = rustix::fs::open(
            self.dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        super::collect::open_file(dir.as_fd(), Path::new(&format!("blobs/{n}")))
    }
}

impl KeptLayer {
    /// Keeps `changes` (but those in `applied`) of run `run_id`; their new
    /// contents are read through `contents`. Returns the layer's directory.
    #[expect(
        clippy::too_many_arguments,
        reason = "one call site, each a different fact"
    )]
    pub(crate) fn save(
        sessions_dir: &Path,
        run_id: &str,
        workspace: &Path,
        since: SystemTime,
        protected: &[PathBuf],
        changes: &[Change],
        applied: &[String],
        contents: &dyn Contents,
    ) -> io::Result<PathBuf> {
        let dir = layers_dir(sessions_dir).join(run_id);
        std::fs::create_dir_all(layers_dir(sessions_dir))?;
        std::fs::create_dir(&dir)?;
        std::fs::create_dir(dir.join("blobs"))?;
        let kept: Vec<Change> = changes
            .iter()
            .filter(|c| !applied.contains(&c.path))
            .cloned()
            .collect();
        for (n, change) in kept.iter().enumerate() {
            if change.refused.is_none() && matches!(change.node, super::change::Node::File { .. }) {
                let mut source = contents.open(change)?;
                let mut blob = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(dir.join("blobs").join(n.to_string()))?;
                io::copy(&mut source, &mut blob)?;
            }
        }
        let since = since.duration_since(UNIX_EPOCH).unwrap_or_default();
        let manifest = Manifest {
            version: MANIFEST_VERSION,
            run_id: run_id.to_owned(),
            workspace: workspace.display().to_string(),
            since_secs: since.as_secs(),
            since_nanos: since.subsec_nanos(),
            protected: protected.iter().map(|p| p.display().to_string()).collect(),
            changes: kept,
        };
        write_manifest(&dir, &manifest)?;
        Ok(dir)
    }

    /// The kept changes of `run_id` in `sessions_dir`.
    pub fn load(sessions_dir: &Path, run_id: &str) -> Result<Self, KeptLayerError> {
        let unusable = |reason: String| KeptLayerError::Unusable {
            run_id: run_id.to_owned(),
            reason,
        };
        if run_id.is_empty() || run_id.contains('/') || run_id.starts_with('.') {
            return Err(unusable("not a run id".into()));
        }
        let dir = layers_dir(sessions_dir).join(run_id);
        let text = read_capped_string(&dir.join("manifest.json"), MANIFEST_CAP)
            .map_err(|e| unusable(e.to_string()))?
            .ok_or_else(|| KeptLayerError::NotFound {
                run_id: run_id.to_owned(),
                dir: layers_dir(sessions_dir),
            })?;
        let mut manifest: Manifest =
            serde_json::from_str(&text).map_err(|e| unusable(format!("manifest.json: {e}")))?;
        if manifest.version != MANIFEST_VERSION {
            return Err(unusable(format!(
                "manifest version {} is not {MANIFEST_VERSION}",
                manifest.version
            )));
        }
        let protected: Vec<PathBuf> = manifest.protected.iter().map(PathBuf::from).collect();
        for change in &mut manifest.changes {
            if let Some(reason) = policy::refusal(change, &protected) {
                change.refused = Some(reason);
            }
        }
        Ok(Self { dir, manifest })
    }

    /// The directory the layer is kept in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The workspace the run worked in.
    pub fn workspace(&self) -> &Path {
        Path::new(&self.manifest.workspace)
    }

    /// Applies the kept changes to the workspace with the rules of a run's
    /// end; with `dry_run`, says what would happen. Applied changes leave
    /// the layer; the layer goes once nothing applicable is left.
    pub fn apply(&mut self, dry_run: bool) -> Result<Changes, KeptLayerError> {
        let unusable = |reason: String| KeptLayerError::Unusable {
            run_id: self.manifest.run_id.clone(),
            reason,
        };
        let root = beneath_root(self.workspace())
            .map_err(|e| unusable(format!("the workspace {}: {e}", self.manifest.workspace)))?;
        let since = UNIX_EPOCH
            + Duration::new(
                self.manifest.since_secs,
                self.manifest.since_nanos.min(999_999_999),
            );
        let blobs = self.blobs();
        let Applied {
            applied,
            conflicts,
            refused,
        } = apply(&self.manifest.changes, root.as_fd(), since, &blobs, dry_run);
        let mut changes = Changes {
            files: self.manifest.changes.iter().map(Change::to_file).collect(),
            applied: applied.clone(),
            conflicts,
            refused,
            not_applied: None,
            layer: Some(self.dir.display().to_string()),
        };
        if dry_run {
            return Ok(changes);
        }
        self.manifest.changes.retain(|c| !applied.contains(&c.path));
        let applicable = self.manifest.changes.iter().any(|c| c.refused.is_none());
        if applicable {
            write_manifest(&self.dir, &self.manifest).map_err(|e| unusable(e.to_string()))?;
        } else {
            std::fs::remove_dir_all(&self.dir).map_err(|e| unusable(e.to_string()))?;
            changes.layer = None;
        }
        Ok(changes)
    }

    /// A unified diff of the kept changes against the workspace now.
    pub fn diff(&self) -> Result<String, KeptLayerError> {
        let root = beneath_root(self.workspace()).map_err(|e| KeptLayerError::Unusable {
            run_id: self.manifest.run_id.clone(),
            reason: format!("the workspace {}: {e}", self.manifest.workspace),
        })?;
        Ok(super::diff::unified(
            &self.manifest.changes,
            root.as_fd(),
            &self.blobs(),
        ))
    }

    fn blobs(&self) -> Blobs<'_> {
        Blobs {
            dir: &self.dir,
            index: self
                .manifest
                .changes
                .iter()
                .enumerate()
                .map(|(n, c)| (c.path.as_str(), n))
                .collect(),
        }
    }

    /// Removes the kept layer of `run_id`, if any.
    pub fn remove(sessions_dir: &Path, run_id: &str) -> io::Result<bool> {
        if run_id.is_empty() || run_id.contains('/') || run_id.starts_with('.') {
            return Ok(false);
        }
        match std::fs::remove_dir_all(layers_dir(sessions_dir).join(run_id)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }
}

fn beneath_root(workspace: &Path) -> io::Result<std::os::fd::OwnedFd> {
    Ok(rustix::fs::open(
        workspace,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

fn write_manifest(dir: &Path, manifest: &Manifest) -> io::Result<()> {
    let temp = dir.join(format!(".manifest.{}.tmp", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)?;
    file.write_all(&serde_json::to_vec_pretty(manifest).map_err(io::Error::other)?)?;
    file.sync_all()?;
    std::fs::rename(&temp, dir.join("manifest.json"))
}
