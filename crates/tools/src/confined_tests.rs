use std::io;

use pretty_assertions::assert_eq;

use super::*;
use crate::test_tree::tree;

/// What the confined thread could do: read inside, read outside, write
/// inside, each as `Ok` or the error kind.
type Reach = (
    Result<String, io::ErrorKind>,
    Result<String, io::ErrorKind>,
    Result<(), io::ErrorKind>,
);

#[tokio::test]
async fn a_file_tool_thread_reads_the_workspace_and_nothing_else() {
    let dir = tree(&[("a.txt", "inside")]);
    let outside = tree(&[("secret.txt", "outside")]);
    let (inside_file, outside_file) = (dir.path().join("a.txt"), outside.path().join("secret.txt"));
    let written = dir.path().join("new.txt");
    let ctx = ToolContext::new(dir.path());
    // By absolute path on purpose: the wall must hold where the first one
    // (opening beneath the root fd) is not used.
    let reach: Reach = run_confined(&ctx, move |_| {
        Ok((
            std::fs::read_to_string(&inside_file).map_err(|e| e.kind()),
            std::fs::read_to_string(&outside_file).map_err(|e| e.kind()),
            std::fs::write(&written, "x").map_err(|e| e.kind()),
        ))
    })
    .await
    .unwrap();
    assert_eq!(
        reach,
        (
            Ok("inside".to_owned()),
            Err(io::ErrorKind::PermissionDenied),
            Err(io::ErrorKind::PermissionDenied),
        )
    );
    // The caller's thread is not confined: the wall is the file tool's only.
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret.txt")).unwrap(),
        "outside"
    );
}

#[tokio::test]
async fn a_dropped_call_raises_the_cancel_flag_of_its_thread() {
    let dir = tree(&[]);
    let ctx = ToolContext::new(dir.path());
    let (started, wait_started) = std::sync::mpsc::channel();
    let (saw_cancel, cancelled) = std::sync::mpsc::channel();
    let call = run_confined(&ctx, move |cancel| {
        started.send(()).unwrap();
        while !cancel.is_raised() {
            std::thread::yield_now();
        }
        saw_cancel.send(()).unwrap();
        Ok(())
    });
    tokio::select! {
        _ = call => panic!("the work ended on its own"),
        () = async { while wait_started.try_recv().is_err() { tokio::task::yield_now().await } } => {}
    }
    cancelled
        .recv_timeout(std::time::Duration::from_secs(10))
        .unwrap();
}

#[tokio::test]
async fn a_pinned_workspace_swapped_for_a_symlink_confines_to_the_pinned_directory() {
    let dir = tree(&[("ws/a.txt", "inside")]);
    let outside = tree(&[("secret.txt", "outside")]);
    let ws = dir.path().join("ws");
    let pin = crate::pin::WorkspacePin::open(&ws).unwrap();
    std::fs::rename(&ws, dir.path().join("ws.admitted")).unwrap();
    std::os::unix::fs::symlink(outside.path(), &ws).unwrap();
    for pinned in [true, false] {
        let ctx = ToolContext::new(&ws).with_workspace_pin(pinned.then(|| pin.clone()), "r");
        let (secret, admitted) = (ws.join("secret.txt"), dir.path().join("ws.admitted/a.txt"));
        let reach = run_confined(&ctx, move |_| {
            Ok((
                std::fs::read_to_string(&secret).map_err(|e| e.kind()),
                std::fs::read_to_string(&admitted).map_err(|e| e.kind()),
            ))
        })
        .await
        .unwrap();
        if pinned {
            assert_eq!(
                reach,
                (
                    Err(io::ErrorKind::PermissionDenied),
                    Ok("inside".to_owned())
                )
            );
        } else {
            // Control: by path, the rule follows the swap.
            assert_eq!(reach.0, Ok("outside".to_owned()));
        }
    }
}
