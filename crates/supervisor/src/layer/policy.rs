//! Which changes are never applied, whatever the run: what the host trusts
//! (`.git`, `.subagent`, `.claude` at any depth, and the operator's
//! protected paths: a sessions dir or results file in the workspace),
//! setuid and setgid bits, devices, FIFOs and sockets, and symlinks that
//! lead out of the workspace.
//!
//! Pure: a change and the run's protected paths in, a reason out.

use std::path::{Component, Path, PathBuf};

use subagent_sandbox::PROTECTED_WORKSPACE_ENTRIES;

use super::change::{Change, Node};

/// Marks every change the policy refuses; `protected` are relative to the
/// workspace.
pub(crate) fn judge(changes: &mut [Change], protected: &[PathBuf]) {
    for change in changes.iter_mut() {
        if change.refused.is_none() {
            change.refused = refusal(change, protected);
        }
    }
}

/// Why `change` is never applied, if it is not.
pub(crate) fn refusal(change: &Change, protected: &[PathBuf]) -> Option<String> {
    for path in std::iter::once(change.rel()).chain(change.from.as_deref().map(Path::new)) {
        if let Some(entry) = trusted_entry(path) {
            return Some(format!(
                "under {entry}, which the host trusts (git runs what .git holds; subagent reads \
                 .subagent and .claude)"
            ));
        }
        if let Some(kept) = protected
            .iter()
            .find(|p| path.starts_with(p) || p.starts_with(path))
        {
            return Some(format!(
                "the operator's {} is protected (a sessions dir or results file)",
                kept.display()
            ));
        }
    }
    match &change.node {
        Node::File { mode, .. } | Node::Dir { mode } if mode & 0o6000 != 0 => {
            Some("setuid or setgid: a file the host could run with another's rights".into())
        }
        Node::Special { what } if what == "name" => None,
        Node::Special { what } => Some(format!("a {what}, which is never applied")),
        Node::Symlink { target } if leads_out(change.rel(), Path::new(target)) => Some(format!(
            "a symlink leading out of the workspace (to {target})"
        )),
        _ => None,
    }
}

fn trusted_entry(path: &Path) -> Option<&'static str> {
    path.components().find_map(|c| match c {
        Component::Normal(name) => PROTECTED_WORKSPACE_ENTRIES
            .iter()
            .find(|e| name == **e)
            .copied(),
        _ => None,
    })
}

/// Whether a symlink at `link` (relative to the workspace) saying
/// `target` leads out of it: absolute, or above the root once resolved
/// lexically from the link's directory.
fn leads_out(link: &Path, target: &Path) -> bool {
    if target.is_absolute() {
        return true;
    }
    let mut depth: i64 = link.parent().map_or(0, |p| p.components().count() as i64);
    for component in target.components() {
        match component {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return true,
        }
        if depth < 0 {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use subagent_protocol::changes::ChangeKind;

    use super::*;

    fn change(path: &str, node: Node) -> Change {
        Change::new(path.into(), ChangeKind::Added, node)
    }

    #[test]
    fn what_the_host_trusts_is_refused_at_any_depth() {
        let file = Node::File {
            mode: 0o644,
            bytes: 1,
        };
        for path in [
            ".git/hooks/x",
            "vendor/lib/.git/config",
            ".subagent/config.toml",
            "a/.claude",
        ] {
            assert!(
                refusal(&change(path, file.clone()), &[]).is_some(),
                "{path}"
            );
        }
        assert_eq!(refusal(&change("src/git.rs", file.clone()), &[]), None);
        let protected = [PathBuf::from("sessions")];
        assert!(refusal(&change("sessions/x.jsonl", file.clone()), &protected).is_some());
        let mut renamed = change("src/a", file);
        renamed.from = Some(".git/config".into());
        assert!(refusal(&renamed, &[]).is_some());
    }

    #[test]
    fn setuid_devices_and_symlinks_out_are_refused() {
        let suid = Node::File {
            mode: 0o4755,
            bytes: 1,
        };
        assert!(refusal(&change("id", suid), &[]).is_some());
        let fifo = Node::Special {
            what: "FIFO".into(),
        };
        assert!(refusal(&change("f", fifo), &[]).is_some());
        for (link, target, out) in [
            ("l", "/etc/passwd", true),
            ("l", "../x", true),
            ("a/l", "../x", false),
            ("a/l", "../../x", true),
            ("a/l", "b/../../c", false),
        ] {
            let node = Node::Symlink {
                target: target.into(),
            };
            assert_eq!(
                refusal(&change(link, node), &[]).is_some(),
                out,
                "{link} -> {target}"
            );
        }
    }
}
