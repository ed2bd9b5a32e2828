//! Where a server's installation is, from its program's path (and, for
//! `node /x/node_modules/pkg/dist/index.js`, its arguments): the tool
//! sandbox shows only the system directories and the workspace, so these
//! are given to the server read-only.
//!
//! The rule: a path under a `node_modules` directory gives the directory
//! holding the topmost `node_modules` (a project or a global prefix); a
//! program whose parent is a `bin` directory gives that `bin`'s parent (a
//! venv, a prefix such as `~/.local`). System directories need nothing.
//! A directory that would hold the home directory or the workspace is
//! never given (it would show the operator's whole home): the program's
//! own directory is given in its place. Pure: paths in, paths out; the
//! caller checked what exists.

use std::path::{Component, Path, PathBuf};

/// Directories every tool process sees already.
const SYSTEM_DIRS: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc"];

/// The installation directories of a server whose program is `command`
/// (as found on `PATH`) and `canonical` (its real path), with `args`.
pub(super) fn installation_dirs(
    command: &Path,
    canonical: &Path,
    args: &[String],
    workspace: &Path,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut add = |dir: Option<PathBuf>| {
        if let Some(dir) = dir
            && !dirs.contains(&dir)
        {
            dirs.push(dir);
        }
    };
    for program in [command, canonical] {
        let derived = above_node_modules(program).or_else(|| prefix_of_bin(program));
        let fallback = program.parent().map(Path::to_owned);
        add(derived
            .filter(|d| allowed(d, workspace, home))
            .or_else(|| fallback.filter(|d| allowed(d, workspace, home))));
    }
    for arg in args {
        let path = Path::new(arg);
        if path.is_absolute() && !path.starts_with(workspace) && path.exists() {
            add(above_node_modules(path).filter(|d| allowed(d, workspace, home)));
        }
    }
    dirs
}

/// The directory holding the topmost `node_modules` in `path`.
fn above_node_modules(path: &Path) -> Option<PathBuf> {
    let mut dir = PathBuf::new();
    for component in path.components() {
        if component == Component::Normal("node_modules".as_ref()) {
            return Some(dir);
        }
        dir.push(component);
    }
    None
}

/// `P` for a program at `P/bin/NAME`.
fn prefix_of_bin(program: &Path) -> Option<PathBuf> {
    let bin = program.parent()?;
    (bin.file_name()? == "bin").then(|| bin.parent().map(Path::to_owned))?
}

/// Whether `dir` may be given: not a system directory (nothing to add),
/// not the root, and holding neither the home directory nor the workspace.
fn allowed(dir: &Path, workspace: &Path, home: Option<&Path>) -> bool {
    let system = SYSTEM_DIRS.iter().any(|s| dir.starts_with(s));
    let holds = |inner: &Path| inner.starts_with(dir);
    dir.is_absolute()
        && dir.parent().is_some()
        && !system
        && !holds(workspace)
        && !home.is_some_and(holds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(command: &str, args: &[&str]) -> Vec<PathBuf> {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        installation_dirs(
            Path::new(command),
            Path::new(command),
            &args,
            Path::new("/home/u/project"),
            Some(Path::new("/home/u")),
        )
    }

    #[test]
    fn a_venv_or_prefix_is_the_bin_dirs_parent() {
        assert_eq!(
            dirs("/opt/venv/bin/mcp-server-time", &[]),
            [PathBuf::from("/opt/venv")]
        );
        assert_eq!(
            dirs("/home/u/.local/share/uv/tools/x/bin/x", &[]),
            [PathBuf::from("/home/u/.local/share/uv/tools/x")]
        );
    }

    #[test]
    fn node_modules_gives_the_dir_holding_the_topmost_one() {
        assert_eq!(
            dirs("/srv/app/node_modules/.bin/mcp-server-filesystem", &[]),
            [PathBuf::from("/srv/app")]
        );
        assert_eq!(
            dirs(
                "/usr/bin/node",
                &["/opt/mcp/node_modules/pkg/node_modules/x/dist/index.js"]
            ),
            Vec::<PathBuf>::new(),
            "an argument that does not exist gives nothing"
        );
    }

    #[test]
    fn system_dirs_need_nothing_and_home_or_the_workspace_is_never_given() {
        assert!(dirs("/usr/bin/uvx", &[]).is_empty());
        assert!(dirs("/usr/local/bin/uvx", &[]).is_empty());
        // ~/bin/x: its prefix would be the home; its own dir is given.
        assert_eq!(dirs("/home/u/bin/x", &[]), [PathBuf::from("/home/u/bin")]);
        assert!(dirs("/x", &[]).is_empty(), "the root is never given");
    }
}
