//! The view plan on hosts described by tables (no mounts made): what is
//! bound, how symlinks and configuration are treated, and the order of the
//! child's mount steps.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;
use crate::isolation::config::PRIVATE_TMP_BYTES;

/// A host described by a table; anything not in it is missing.
fn host(entries: &[(&str, Kind)]) -> impl Fn(&Path) -> Kind + use<> {
    let table: BTreeMap<PathBuf, Kind> = entries
        .iter()
        .map(|(p, k)| (PathBuf::from(p), k.clone()))
        .collect();
    move |path: &Path| table.get(path).cloned().unwrap_or(Kind::Missing)
}

fn link(target: &str, resolved: &str) -> Kind {
    Kind::Symlink {
        target: PathBuf::from(target),
        resolved: Some(PathBuf::from(resolved)),
    }
}

fn isolation(read_only: &[&str], read_write: &[&str], private_tmp: Option<&str>) -> Isolation {
    Isolation {
        read_only: read_only.iter().map(PathBuf::from).collect(),
        read_write: read_write.iter().map(PathBuf::from).collect(),
        private_tmp: private_tmp.map(PathBuf::from),
        ..Isolation::strict(Vec::new())
    }
}

fn bind(source: &str, target: &str, mode: BindMode, is_dir: bool, in_view: bool) -> Mount {
    Mount::Bind {
        source: PathBuf::from(source),
        target: PathBuf::from(target),
        mode,
        is_dir,
        from: if in_view {
            BindFrom::View
        } else {
            BindFrom::Host
        },
    }
}

fn targets(mounts: &[Mount]) -> Vec<String> {
    mounts
        .iter()
        .map(|m| m.target().display().to_string())
        .collect()
}

#[test]
fn a_view_holds_only_what_is_listed_plus_tmp_dev_links_and_proc() {
    let kind = host(&[
        ("/usr", Kind::Dir),
        ("/etc/passwd", Kind::File),
        ("/dev/null", Kind::Device),
        ("/srv/ws", Kind::Dir),
    ]);
    let mounts = plan_mounts(
        &isolation(
            &["/usr", "/etc/passwd", "/opt/missing"],
            &["/srv/ws", "/dev/null"],
            None,
        ),
        &kind,
        None,
    );
    assert_eq!(
        targets(&mounts),
        [
            "/dev/fd",
            "/dev/null",
            "/dev/stderr",
            "/dev/stdin",
            "/dev/stdout",
            "/etc/passwd",
            "/proc",
            "/srv/ws",
            // Placeholders: the workspace had none of them.
            "/srv/ws/.claude",
            "/srv/ws/.git",
            "/srv/ws/.subagent",
            "/tmp",
            "/usr",
        ]
    );
    assert!(mounts.contains(&bind("/usr", "/usr", BindMode::ReadOnly, true, false)));
    assert!(mounts.contains(&bind(
        "/etc/passwd",
        "/etc/passwd",
        BindMode::ReadOnly,
        false,
        false
    )));
    assert!(mounts.contains(&bind(
        "/dev/null",
        "/dev/null",
        BindMode::Device,
        false,
        false
    )));
    assert!(mounts.contains(&bind(
        "/srv/ws",
        "/srv/ws",
        BindMode::ReadWrite,
        true,
        false
    )));
}

#[test]
fn a_path_inside_another_of_its_list_is_not_bound_twice() {
    let kind = host(&[("/usr", Kind::Dir), ("/usr/lib/python3", Kind::Dir)]);
    let mounts = plan_mounts(
        &isolation(&["/usr/lib/python3", "/usr", "/usr"], &[], None),
        &kind,
        None,
    );
    let usr_binds = mounts
        .iter()
        .filter(|m| matches!(m, Mount::Bind { target, .. } if target.starts_with("/usr")))
        .count();
    assert_eq!(usr_binds, 1, "{mounts:?}");
}

#[test]
fn a_symlink_into_the_view_stays_a_symlink_and_one_out_of_it_is_bound_resolved() {
    let kind = host(&[
        ("/usr", Kind::Dir),
        ("/usr/bin", Kind::Dir),
        ("/bin", link("usr/bin", "/usr/bin")),
        (
            "/etc/resolv.conf",
            link("../run/resolv.conf", "/run/resolv.conf"),
        ),
        ("/run/resolv.conf", Kind::File),
    ]);
    let mounts = plan_mounts(
        &isolation(&["/usr", "/bin", "/etc/resolv.conf"], &[], None),
        &kind,
        None,
    );
    assert!(mounts.contains(&Mount::Symlink {
        target: PathBuf::from("usr/bin"),
        link: PathBuf::from("/bin"),
    }));
    assert!(mounts.contains(&bind(
        "/run/resolv.conf",
        "/etc/resolv.conf",
        BindMode::ReadOnly,
        false,
        false
    )));
    assert!(!targets(&mounts).iter().any(|t| t.starts_with("/run")));
}

#[test]
fn configuration_in_a_writable_root_is_bound_read_only_over_itself() {
    let kind = host(&[
        ("/ws", Kind::Dir),
        ("/ws/.git", Kind::Dir),
        ("/ws/.claude", Kind::File),
        ("/ws/.subagent", link("/elsewhere", "/elsewhere")),
    ]);
    let mounts = plan_mounts(&isolation(&[], &["/ws"], None), &kind, None);
    assert!(mounts.contains(&bind(
        "/ws/.git",
        "/ws/.git",
        BindMode::ReadOnly,
        true,
        true
    )));
    assert!(mounts.contains(&bind(
        "/ws/.claude",
        "/ws/.claude",
        BindMode::ReadOnly,
        false,
        true
    )));
    // A symlinked entry is left as it is (its target is what the view has).
    assert!(!targets(&mounts).contains(&"/ws/.subagent".to_owned()));
    // The workspace is bound before what is bound over its entries.
    let ws = targets(&mounts).iter().position(|t| t == "/ws");
    let git = targets(&mounts).iter().position(|t| t == "/ws/.git");
    assert!(ws < git, "{mounts:?}");
}

#[test]
fn a_protected_path_inside_a_writable_root_is_bound_read_only_and_one_outside_is_not() {
    let kind = host(&[
        ("/home/u", Kind::Dir),
        ("/home/u/.config/subagent", Kind::Dir),
        ("/etc/subagent", Kind::Dir),
    ]);
    let mut asked = isolation(&[], &["/home/u"], None);
    asked.protected = vec![
        PathBuf::from("/home/u/.config/subagent"),
        PathBuf::from("/etc/subagent"),
        PathBuf::from("/home/u"),
    ];
    let mounts = plan_mounts(&asked, &kind, None);
    assert!(mounts.contains(&bind(
        "/home/u/.config/subagent",
        "/home/u/.config/subagent",
        BindMode::ReadOnly,
        true,
        true
    )));
    // Outside every writable root: nothing to protect, nothing bound.
    assert!(!targets(&mounts).contains(&"/etc/subagent".to_owned()));
    // The writable root itself stays writable.
    assert!(mounts.contains(&bind(
        "/home/u",
        "/home/u",
        BindMode::ReadWrite,
        true,
        false
    )));
}

#[test]
fn the_private_tmp_is_a_directory_of_the_tmp_tmpfs_not_the_host_directory() {
    let kind = host(&[("/tmp/subagent-tool-1", Kind::Dir), ("/ws", Kind::Dir)]);
    let mounts = plan_mounts(
        &isolation(
            &[],
            &["/ws", "/tmp/subagent-tool-1"],
            Some("/tmp/subagent-tool-1"),
        ),
        &kind,
        None,
    );
    assert!(mounts.contains(&Mount::PrivateDir {
        target: PathBuf::from("/tmp/subagent-tool-1")
    }));
    assert!(mounts.contains(&Mount::Tmpfs {
        target: PathBuf::from("/tmp"),
        bytes: PRIVATE_TMP_BYTES,
        mode: 0o1777,
    }));
    assert!(!mounts.iter().any(
        |m| matches!(m, Mount::Bind { source, .. } if source.starts_with("/tmp/subagent-tool-1"))
    ));
    // Outside /tmp it gets a capped tmpfs of its own.
    let mounts = plan_mounts(&isolation(&[], &[], Some("/var/tmp/t")), &kind, None);
    assert!(mounts.contains(&Mount::Tmpfs {
        target: PathBuf::from("/var/tmp/t"),
        bytes: PRIVATE_TMP_BYTES,
        mode: 0o700,
    }));
}

#[test]
fn ops_make_each_ancestor_once_then_the_mount_point_then_the_mount() {
    let mounts = vec![
        bind("/a/b/f", "/a/b/f", BindMode::ReadOnly, false, false),
        bind("/a/b/d", "/a/b/d", BindMode::ReadWrite, true, false),
    ];
    let ops = plan_ops(&mounts).unwrap();
    let dir = |p: &str| Op::Dir {
        path: CString::new(format!("/newroot{p}")).unwrap(),
        mode: 0o755,
    };
    assert_eq!(
        ops,
        vec![
            dir("/a"),
            dir("/a/b"),
            Op::File {
                path: c"/newroot/a/b/f".to_owned()
            },
            Op::Bind {
                source: c"/oldroot/a/b/f".to_owned(),
                target: c"/newroot/a/b/f".to_owned(),
                mode: BindMode::ReadOnly,
            },
            dir("/a/b/d"),
            Op::Bind {
                source: c"/oldroot/a/b/d".to_owned(),
                target: c"/newroot/a/b/d".to_owned(),
                mode: BindMode::ReadWrite,
            },
        ]
    );
}

#[test]
fn a_working_directory_outside_the_view_is_refused_with_what_to_do() {
    let outside = tempfile::tempdir().unwrap();
    let error = ViewPlan::new(
        &isolation(&["/usr"], &[], None),
        Some(outside.path()),
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("not inside the tool's filesystem view"),
        "{error}"
    );
    assert!(error.contains("writable roots"), "{error}");
}

#[test]
fn absent_configuration_entries_get_read_only_placeholders() {
    let kind = host(&[("/ws", Kind::Dir), ("/ws/.claude", Kind::Dir)]);
    let mounts = plan_mounts(&isolation(&[], &["/ws"], None), &kind, None);
    for name in ["/ws/.git", "/ws/.subagent"] {
        assert!(
            mounts.contains(&Mount::Placeholder {
                target: PathBuf::from(name)
            }),
            "{name}: {mounts:?}"
        );
    }
    // An existing one is bound over itself, as before.
    assert!(mounts.contains(&bind(
        "/ws/.claude",
        "/ws/.claude",
        BindMode::ReadOnly,
        true,
        true
    )));
    let ops = plan_ops(&mounts).unwrap();
    assert!(ops.contains(&Op::Placeholder {
        path: c"/newroot/ws/.git".to_owned()
    }));
}

#[test]
fn a_protected_file_deep_in_a_root_holds_every_directory_above_it() {
    let kind = host(&[
        ("/ws", Kind::Dir),
        ("/ws/out", Kind::Dir),
        ("/ws/out/runs", Kind::Dir),
        ("/ws/out/runs/results.jsonl", Kind::File),
    ]);
    let mut asked = isolation(&[], &["/ws"], None);
    asked.protected = vec![PathBuf::from("/ws/out/runs/results.jsonl")];
    let mounts = plan_mounts(&asked, &kind, None);
    assert!(mounts.contains(&bind(
        "/ws/out/runs/results.jsonl",
        "/ws/out/runs/results.jsonl",
        BindMode::ReadOnly,
        false,
        true
    )));
    // Mount points cannot be renamed: the file's directories stay put,
    // writable.
    for dir in ["/ws/out", "/ws/out/runs"] {
        assert!(
            mounts.contains(&bind(dir, dir, BindMode::ReadWrite, true, true)),
            "{dir}: {mounts:?}"
        );
    }
    let order = targets(&mounts);
    let at = |t: &str| order.iter().position(|x| x == t).unwrap();
    assert!(at("/ws") < at("/ws/out") && at("/ws/out/runs") < at("/ws/out/runs/results.jsonl"));
}

#[test]
fn a_pinned_working_directory_is_bound_from_itself_whatever_its_path_leads_to() {
    // The path was swapped for a symlink after the caller checked it.
    let kind = host(&[("/ws", link("/elsewhere", "/elsewhere"))]);
    let pinned = Path::new("/ws");
    let mounts = plan_mounts(&isolation(&[], &["/ws"], None), &kind, Some(pinned));
    assert!(mounts.contains(&Mount::Bind {
        source: PathBuf::new(),
        target: PathBuf::from("/ws"),
        mode: BindMode::ReadWrite,
        is_dir: true,
        from: BindFrom::Cwd,
    }));
    assert!(!targets(&mounts).contains(&"/elsewhere".to_owned()));
    let ops = plan_ops(&mounts).unwrap();
    assert!(ops.contains(&Op::Bind {
        source: c".".to_owned(),
        target: c"/newroot/ws".to_owned(),
        mode: BindMode::ReadWrite,
    }));
}
