//! The workspace layer (`SandboxSpec::layer`): a child's writes land in a
//! capped tmpfs, never in its working directory; a nested child stacks on
//! its parent's view and sees its writes.

use std::os::fd::{AsFd, OwnedFd};

use subagent_sandbox::{LayerJoin, RunLayer, SandboxSpec, UPPER_DIR, WorkspaceLayer};

use super::support::{MIB, assert_nothing_alive, finish, marker, needs, sh};

fn layer_support() -> Result<(), String> {
    subagent_sandbox::isolation_support().namespaces.clone()
}

fn in_workspace(mut spec: SandboxSpec, ws: &std::path::Path, layer: WorkspaceLayer) -> SandboxSpec {
    spec.cwd = ws.to_owned();
    spec.cwd_fd = Some(OwnedFd::from(std::fs::File::open(ws).unwrap()));
    spec.layer = Some(layer);
    spec
}

fn upper_names(layer: &RunLayer) -> Vec<String> {
    let dir = rustix_free_read_dir(layer, UPPER_DIR);
    let mut names: Vec<String> = dir.into_iter().collect();
    names.sort();
    names
}

/// The names in `layer_root/<sub>`, read through /proc/self/fd.
fn rustix_free_read_dir(layer: &RunLayer, sub: &str) -> Vec<String> {
    use std::os::fd::AsRawFd;
    let path = format!("/proc/self/fd/{}/{sub}", layer.layer_root.as_raw_fd());
    std::fs::read_dir(path)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[tokio::test]
async fn writes_land_in_the_capped_layer_and_the_workspace_is_untouched() {
    if needs("user namespaces", layer_support()).is_none() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a"), "old\n").unwrap();
    let marker = marker().await;
    let script = "cat a; echo new >> a; echo made > b; rm -f a2; \
                  dd if=/dev/zero of=big bs=1M count=8 2>/dev/null; echo dd=$?; \
                  i=0; while [ $i -lt 200 ]; do printf '' 2>/dev/null > f$i || break; i=$((i+1)); done; echo files=$i";
    let spec = in_workspace(
        sh(script, &marker, &[]),
        ws.path(),
        WorkspaceLayer::New {
            bytes: 4 * MIB,
            inodes: 64,
            within: None,
        },
    );
    let mut child = subagent_sandbox::spawn(spec).await.unwrap();
    let layer = child.take_layer().expect("the layer came back");
    let pid = child.pid();
    let exit = finish(child).await;
    let out = exit.stdout.lossy_text();
    assert!(out.starts_with("old\n"), "{out}");
    // The tmpfs caps both: bytes (dd fails) and inodes (files stop early).
    assert!(out.contains("dd=1"), "{out}");
    let files: u32 = out.rsplit_once("files=").unwrap().1.trim().parse().unwrap();
    assert!(files < 64, "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a")).unwrap(),
        "old\n"
    );
    assert!(!ws.path().join("b").exists());
    assert!(!ws.path().join("big").exists());
    let names = upper_names(&layer);
    assert!(
        names.contains(&"a".to_owned()) && names.contains(&"b".to_owned()),
        "{names:?}"
    );
    assert_nothing_alive(&marker, &[pid]);
}

#[tokio::test]
async fn a_nested_child_stacks_on_its_parents_view() {
    if needs("user namespaces", layer_support()).is_none() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a"), "host\n").unwrap();
    let marker = marker().await;
    let new = || WorkspaceLayer::New {
        bytes: 4 * MIB,
        inodes: 64,
        within: None,
    };
    let spec = in_workspace(sh("echo parent > p", &marker, &[]), ws.path(), new());
    let mut parent = subagent_sandbox::spawn(spec).await.unwrap();
    let parent_layer = parent.take_layer().unwrap();
    let parent_pid = parent.pid();
    // The parent's namespaces stay alive through their descriptors.
    finish(parent).await;
    let join: LayerJoin = parent_layer.join().unwrap();
    let spec = in_workspace(
        sh("cat p; echo child > c", &marker, &[]),
        ws.path(),
        WorkspaceLayer::New {
            bytes: 4 * MIB,
            inodes: 64,
            within: Some(join),
        },
    );
    let mut child = subagent_sandbox::spawn(spec).await.unwrap();
    let child_layer = child.take_layer().unwrap();
    let child_pid = child.pid();
    let exit = finish(child).await;
    assert_eq!(exit.stdout.lossy_text(), "parent\n", "{exit:?}");
    assert_eq!(upper_names(&child_layer), ["c"]);
    assert_eq!(upper_names(&parent_layer), ["p"]);
    assert!(!ws.path().join("p").exists() && !ws.path().join("c").exists());
    let _ = parent_layer.merged.as_fd();
    assert_nothing_alive(&marker, &[parent_pid, child_pid]);
}
