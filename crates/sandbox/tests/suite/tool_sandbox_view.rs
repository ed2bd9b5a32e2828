//! The filesystem view against the attacks Landlock lets through (it does
//! not cover chmod, utime, xattr, stat, inotify or unix-socket connect):
//! each run with every layer on, then as a control with the view (and,
//! where another layer stops the same attempt, that layer too) switched off,
//! which shows the probe getting through.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::Path;

use super::support::needs_tool_sandbox;
use super::tool_sandbox_support::{
    Dirs, assert_denied, assert_escaped, assert_layer_stops, dirs, probe, run, run_in, stdout,
    strict, without,
};
use subagent_sandbox::{Isolation, Layers};

/// Switches the view off.
fn view_off(layers: &mut Layers) {
    layers.filesystem_view = false;
}

/// Every layer but the view.
fn no_view(dirs: &Dirs) -> Isolation {
    without(strict(dirs), view_off)
}

/// A file outside the workspace, mode 0644.
fn outside_file(dirs: &Dirs) -> (std::path::PathBuf, String) {
    let path = dirs.outside.path().join("secret.txt");
    std::fs::write(&path, "top secret").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let quoted = format!("{:?}", path.display().to_string());
    (path, quoted)
}

fn has_xattr(path: &Path, name: &std::ffi::CStr) -> bool {
    let path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: both strings are NUL-terminated; a null buffer of size 0
    // asks only for the value's size.
    unsafe { libc::getxattr(path.as_ptr(), name.as_ptr(), std::ptr::null_mut(), 0) >= 0 }
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

#[tokio::test]
async fn chmod_of_a_file_outside_the_workspace_finds_nothing() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let (path, quoted) = outside_file(&dirs);
    let attempt = probe(&format!("import os\nos.chmod({quoted}, 0o666)"));
    assert_layer_stops(
        &attempt,
        &dirs,
        "chmod outside the workspace",
        view_off,
        |_| assert_eq!(mode(&path), 0o644),
    )
    .await;
    assert_eq!(mode(&path), 0o666);
}

#[tokio::test]
async fn setuid_on_a_file_outside_the_workspace_finds_nothing() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let (path, quoted) = outside_file(&dirs);
    let attempt = probe(&format!("import os\nos.chmod({quoted}, 0o4755)"));
    // The seccomp filter refuses the setuid bit too: the control lifts both.
    assert_layer_stops(
        &attempt,
        &dirs,
        "setuid outside the workspace",
        |l| {
            view_off(l);
            l.seccomp = false;
        },
        |_| assert_eq!(mode(&path), 0o644),
    )
    .await;
    assert_eq!(mode(&path), 0o4755);
}

#[tokio::test]
async fn utime_of_a_file_outside_the_workspace_finds_nothing() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let (path, quoted) = outside_file(&dirs);
    let attempt = probe(&format!("import os\nos.utime({quoted}, (0, 0))"));
    assert_layer_stops(
        &attempt,
        &dirs,
        "utime outside the workspace",
        view_off,
        |_| assert_ne!(std::fs::metadata(&path).unwrap().mtime(), 0),
    )
    .await;
    assert_eq!(std::fs::metadata(&path).unwrap().mtime(), 0);
}

#[tokio::test]
async fn setxattr_on_a_file_outside_the_workspace_finds_nothing() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let (path, quoted) = outside_file(&dirs);
    let attempt = probe(&format!(
        "import os\nos.setxattr({quoted}, 'user.planted', b'1')"
    ));
    assert_layer_stops(
        &attempt,
        &dirs,
        "setxattr outside the workspace",
        view_off,
        |_| assert!(!has_xattr(&path, c"user.planted")),
    )
    .await;
    assert!(has_xattr(&path, c"user.planted"));
}

#[tokio::test]
async fn chmod_of_the_workspaces_parent_changes_nothing_on_the_host() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    // The workspace lies in `outside`, so `..` is a host directory.
    let workspace = dirs.outside.path().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    let isolation = |base: Isolation| Isolation {
        read_write: vec![workspace.clone(), dirs.tmp.path().to_owned()],
        ..base
    };
    let before = mode(dirs.outside.path());
    let attempt = probe("import os\nos.chmod('..', 0o777)");
    run_in(&attempt, &workspace, &dirs, isolation(strict(&dirs))).await;
    assert_eq!(mode(dirs.outside.path()), before);
    let control = run_in(&attempt, &workspace, &dirs, isolation(no_view(&dirs))).await;
    assert_escaped(&control, "chmod of the workspace's parent");
    assert_eq!(mode(dirs.outside.path()), 0o777);
}

#[tokio::test]
async fn a_host_unix_socket_outside_the_workspace_is_unreachable() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let socket = dirs.outside.path().join("host-service.sock");
    let _listener = UnixListener::bind(&socket).unwrap();
    let attempt = probe(&format!(
        "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({:?})\ns.close()",
        socket.display().to_string()
    ));
    assert_layer_stops(
        &attempt,
        &dirs,
        "connecting to a host unix socket",
        view_off,
        |_| {},
    )
    .await;
}

#[tokio::test]
async fn etc_ssl_private_does_not_exist_in_the_view() {
    if !needs_tool_sandbox() || !Path::new("/etc/ssl/private").exists() {
        return;
    }
    let dirs = dirs();
    let code =
        "import os\nprint(os.path.lexists('/etc/ssl/private'), os.path.exists('/etc/ssl/certs'))";
    let exit = run(code, &dirs, strict(&dirs)).await;
    assert_eq!(stdout(&exit), "False True\n", "{exit:?}");
    let control = run(code, &dirs, no_view(&dirs)).await;
    assert_eq!(stdout(&control), "True True\n", "{control:?}");
    // Landlock, the second wall, no longer allows all of /etc/ssl either.
    let list = probe("import os\nos.listdir('/etc/ssl/private')");
    let landlock_only = run(&list, &dirs, no_view(&dirs)).await;
    assert_denied(&landlock_only, "listing /etc/ssl/private under Landlock");
}

#[tokio::test]
async fn stat_of_a_host_path_sees_nothing() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let (_, quoted) = outside_file(&dirs);
    let attempt = probe(&format!("import os\nos.stat({quoted})"));
    assert_layer_stops(&attempt, &dirs, "stat of a host file", view_off, |exit| {
        assert!(stdout(exit).contains("FileNotFoundError"), "{exit:?}")
    })
    .await;
}

#[tokio::test]
async fn inotify_on_a_host_path_sees_nothing() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let (_, quoted) = outside_file(&dirs);
    let attempt = probe(&format!(
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nfd = libc.inotify_init1(0)\nif libc.inotify_add_watch(fd, {quoted}.encode(), 0xfff) < 0:\n    raise OSError(ctypes.get_errno(), 'inotify_add_watch refused')"
    ));
    assert_layer_stops(&attempt, &dirs, "inotify on a host file", view_off, |_| {}).await;
}

/// Writes `relative` (in a workspace where its directory exists) and says
/// whether the file got there, with every layer and without the view.
async fn write_config(relative: &str) {
    let dirs = dirs();
    let target = dirs.workspace.path().join(relative);
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    let attempt = probe(&format!("open({relative:?}, 'w').write('planted = true')"));
    assert_layer_stops(
        &attempt,
        &dirs,
        &format!("writing {relative}"),
        view_off,
        |exit| {
            assert!(stdout(exit).contains("Read-only file system"), "{exit:?}");
            assert!(!target.exists());
        },
    )
    .await;
    assert!(target.exists());
}

#[tokio::test]
async fn writing_subagent_config_in_the_workspace_fails() {
    if needs_tool_sandbox() {
        write_config(".subagent/config.toml").await;
    }
}

#[tokio::test]
async fn writing_a_claude_agent_in_the_workspace_fails() {
    if needs_tool_sandbox() {
        write_config(".claude/agents/x.md").await;
    }
}

#[tokio::test]
async fn writing_a_git_hook_in_the_workspace_fails() {
    if needs_tool_sandbox() {
        write_config(".git/hooks/pre-commit").await;
    }
}

#[tokio::test]
async fn the_git_dir_cannot_be_moved_aside_and_replaced() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    std::fs::create_dir_all(dirs.workspace.path().join(".git/hooks")).unwrap();
    let attempt = probe(
        "import os\nos.rename('.git', 'moved')\nos.makedirs('.git/hooks')\nopen('.git/hooks/pre-commit', 'w').write('x')",
    );
    let exit = run(&attempt, &dirs, strict(&dirs)).await;
    assert_denied(&exit, "moving .git aside");
    assert!(dirs.workspace.path().join(".git/hooks").is_dir());
    assert!(!dirs.workspace.path().join(".git/hooks/pre-commit").exists());
}

#[tokio::test]
async fn the_view_holds_a_capped_private_tmp_a_minimal_dev_and_a_read_only_root() {
    if !needs_tool_sandbox() {
        return;
    }
    let dirs = dirs();
    let code = format!(
        "import os\nst = os.statvfs({:?})\nprint(st.f_blocks * st.f_frsize // (1024 * 1024))\ntry:\n    os.mkdir('/planted')\nexcept OSError as e:\n    print(e.strerror)\nfor group in (['/dev/null', '/dev/zero', '/dev/full', '/dev/random', '/dev/urandom', '/dev/fd', '/proc/self', '/tmp', '/usr/bin'], ['/dev/kmsg', '/dev/mem', '/dev/shm', '/dev/tty', '/run', '/var', '/home', '/root', '/sys', '/srv', '/mnt', '/boot', '/oldroot', '/newroot']):\n    print([p for p in group if os.path.lexists(p)] == group, [p for p in group if os.path.lexists(p)])",
        dirs.tmp.path().display().to_string()
    );
    let exit = run(&code, &dirs, strict(&dirs)).await;
    let out = stdout(&exit);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{exit:?}");
    assert_eq!(lines[0], "256", "the private tmp's size in MiB");
    assert_eq!(lines[1], "Read-only file system");
    assert!(
        lines[2].starts_with("True"),
        "what must exist: {}",
        lines[2]
    );
    assert_eq!(lines[3], "False []", "what must not exist");
}
