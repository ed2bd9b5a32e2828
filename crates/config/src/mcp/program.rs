//! Finding a server's program (or its script's interpreter) the way a
//! shell would: an absolute path as written, a bare name on the run's
//! `PATH`. Looks at the disk only to see what is an executable file; runs
//! nothing, trusts nothing it finds (the caller checks where it lies).

use std::path::{Path, PathBuf};

use crate::env_lookup::EnvLookup;

/// `command` as an absolute path: itself when it holds a `/` (then it must
/// be absolute), else the first executable file of that name on `PATH`.
pub fn find_program(command: &str, env: EnvLookup<'_>) -> Result<PathBuf, String> {
    if command.contains('/') {
        let path = PathBuf::from(command);
        if !path.is_absolute() {
            return Err("is a relative path".to_owned());
        }
        return if is_executable(&path) {
            Ok(path)
        } else {
            Err("is not an executable file".to_owned())
        };
    }
    let path_var = env("PATH").unwrap_or_default();
    std::env::split_paths(&path_var)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(command))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| "is not found on PATH".to_owned())
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
