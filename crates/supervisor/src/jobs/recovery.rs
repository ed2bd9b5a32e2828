//! A server's start: its own file opened and locked, and the runs dead
//! servers left without an ending marked interrupted
//! ([`super::lifecycle::mark_interrupted`]), all on the runtime's blocking
//! pool: every file here is one a dead server, or a tool, may have left,
//! and none of them may hold up the server's runtime.
//!
//! Files are opened without following a link and without blocking on a
//! FIFO, and must be regular files; which of them get an ending is
//! [`super::lifecycle`]'s decision. It never creates a file but the
//! server's own.

use std::path::{Path, PathBuf};

use super::lifecycle::{InterruptedRun, mark_interrupted};
use super::registry::{Jobs, JobsError};
use super::server_file::open_locked;
use crate::run::SupervisorConfig;

impl Jobs {
    /// [`Jobs::new`] with `parent` as the server's own file, then
    /// [`Jobs::recover_interrupted`] of `serve_dir`, off the runtime's
    /// threads. Returns the registry and the runs marked interrupted.
    pub async fn open(
        config: SupervisorConfig,
        parent: PathBuf,
        serve_dir: PathBuf,
    ) -> Result<(Jobs, Vec<InterruptedRun>), JobsError> {
        let dir = serve_dir.clone();
        tokio::task::spawn_blocking(move || {
            let jobs = Jobs::new(config, Some(parent))?;
            let runs = jobs.recover_interrupted(&serve_dir)?;
            Ok((jobs, runs))
        })
        .await
        .map_err(|e| JobsError::Recover {
            path: dir,
            source: std::io::Error::other(e),
        })?
    }

    /// Marks interrupted the open runs of every `*.jsonl` file in `dir`
    /// that no live server holds (its flock is free), except this
    /// registry's own file (already done by [`Jobs::new`]). Returns them;
    /// [`Jobs::list`] reports them from now on. Blocks on the disk: call it
    /// off the runtime (as [`Jobs::open`] does).
    pub fn recover_interrupted(&self, dir: &Path) -> Result<Vec<InterruptedRun>, JobsError> {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(JobsError::Recover {
                    path: dir.to_owned(),
                    source,
                });
            }
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .filter(|p| Some(p.as_path()) != self.parent_session())
            .collect();
        files.sort();
        let mut all = Vec::new();
        for path in files {
            // Held only while marking: a free lock means a dead owner. A
            // link, a FIFO or a device is no server's file.
            let Ok(_held) = open_locked(&path, false) else {
                continue;
            };
            let runs = mark_interrupted(&path, self.sessions_dir()).map_err(|source| {
                JobsError::Recover {
                    path: path.clone(),
                    source,
                }
            })?;
            all.extend(runs);
        }
        self.remember_interrupted(all.clone());
        Ok(all)
    }
}
