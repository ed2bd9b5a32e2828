//! Shared helpers: specs for `/bin/sh` scripts tagged with a unique marker,
//! waiting with a safety timeout, the check that nothing a test started is
//! still alive (by marker in the environment or command line, and by pid),
//! and [`needs`], the one rule for tests that need a machine feature.

use std::ffi::OsString;
use std::fmt;
use std::ops::Deref;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use subagent_sandbox::{
    CaptureLimits, CgroupKind, ChildExit, SandboxSpec, SandboxedChild, become_subreaper,
    cgroup_support, isolation_support,
};
pub use subagent_test_support::processes::alive_with_marker;
use subagent_test_support::processes::state_and_parent;
use tokio::io::AsyncReadExt;
use tokio::net::UnixStream;
use tokio::sync::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock};

/// Environment variable every test child carries; its descendants inherit it.
pub const MARKER_VAR: &str = "SANDBOX_TEST_MARKER";

/// Longest a test waits for a child that should end by itself.
const TEST_WAIT_LIMIT: Duration = Duration::from_secs(30);

/// Longest a test waits for a dropped child's tree to be gone.
const GONE_WAIT_LIMIT: Duration = Duration::from_secs(10);

pub const MIB: u64 = 1024 * 1024;

static NEXT: AtomicU64 = AtomicU64::new(0);

/// Turns for tests whose trees have no cgroup. Without a cgroup, an orphan
/// reparented to us (a daemon that called setsid and closed its stdio) can
/// only be told apart from another cgroup-less tree's orphan by running one
/// such tree at a time: that is the documented limit of the /proc fallback,
/// so the test of it runs alone and every other test shares.
static TURNS: LazyLock<Arc<RwLock<()>>> = LazyLock::new(|| Arc::new(RwLock::new(())));

/// A string no other process on the machine carries, plus this test's turn.
pub struct Marker {
    text: String,
    _turn: Turn,
}

enum Turn {
    Shared(#[expect(dead_code, reason = "held, never read")] OwnedRwLockReadGuard<()>),
    Alone(#[expect(dead_code, reason = "held, never read")] OwnedRwLockWriteGuard<()>),
}

impl Deref for Marker {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for Marker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A fresh marker for a test that may run alongside others.
pub async fn marker() -> Marker {
    let turn = Turn::Shared(Arc::clone(&TURNS).read_owned().await);
    new_marker(turn)
}

/// A fresh marker for a test that must be the only one running.
pub async fn marker_alone() -> Marker {
    let turn = Turn::Alone(Arc::clone(&TURNS).write_owned().await);
    new_marker(turn)
}

fn new_marker(turn: Turn) -> Marker {
    // Being a subreaper makes orphans of every test reparent to this process,
    // so they can be found and reaped; idempotent.
    become_subreaper().expect("PR_SET_CHILD_SUBREAPER");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let text = format!(
        "sbx-{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    Marker { text, _turn: turn }
}

/// A spec running `script` with `/bin/sh -c`, `$0` = marker, the given extra
/// positional arguments, a minimal environment carrying the marker, a short
/// grace and small capture limits.
pub fn sh(script: &str, marker: &str, extra_args: &[&str]) -> SandboxSpec {
    let mut spec = SandboxSpec::new("/bin/sh", std::env::temp_dir());
    spec.args = vec!["-c".into(), script.into(), marker.into()];
    spec.args.extend(extra_args.iter().map(OsString::from));
    spec.env = vec![
        ("PATH".into(), "/usr/bin:/bin".into()),
        (MARKER_VAR.into(), marker.into()),
    ];
    spec.grace = Duration::from_millis(300);
    spec.capture = CaptureLimits {
        stdout_hard_bytes: MIB,
        stderr_hard_bytes: MIB,
        keep_head_bytes: 4096,
        keep_tail_bytes: 4096,
    };
    spec
}

/// Waits for the child, failing the test if it takes unreasonably long.
pub async fn finish(child: SandboxedChild) -> ChildExit {
    tokio::time::timeout(TEST_WAIT_LIMIT, child.wait())
        .await
        .expect("the child did not finish within the test's wait limit")
}

/// A protocol socket pair: the child's end (for `spec.protocol_fd`) and ours.
pub fn protocol_pair() -> (OwnedFd, UnixStream) {
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().expect("socketpair");
    ours.set_nonblocking(true).expect("nonblocking");
    (
        theirs.into(),
        UnixStream::from_std(ours).expect("tokio socket"),
    )
}

/// Reads from the socket until the text contains `needle`.
pub async fn read_until(stream: &mut UnixStream, needle: &str) -> String {
    let mut text = Vec::new();
    let read = async {
        let mut buf = [0u8; 256];
        while !String::from_utf8_lossy(&text).contains(needle) {
            let n = stream.read(&mut buf).await.expect("read protocol socket");
            assert!(n > 0, "protocol socket closed before {needle:?} arrived");
            text.extend_from_slice(&buf[..n]);
        }
    };
    tokio::time::timeout(TEST_WAIT_LIMIT, read)
        .await
        .expect("the child never signalled readiness");
    String::from_utf8_lossy(&text).into_owned()
}

/// Asserts that no process carrying `marker` is alive and that none of
/// `pids` is alive or left as our unreaped zombie.
pub fn assert_nothing_alive(marker: &str, pids: &[u32]) {
    let alive = alive_with_marker(marker);
    assert!(alive.is_empty(), "processes still alive: {alive:?}");
    for pid in pids {
        if let Some((state, ppid)) = state_and_parent(*pid) {
            let ours_unreaped = state == 'Z' && ppid == std::process::id();
            let live_with_marker = state != 'Z' && alive_with_marker(marker).contains(pid);
            assert!(!ours_unreaped, "pid {pid} is our unreaped zombie");
            assert!(!live_with_marker, "pid {pid} is still alive");
        }
    }
}

/// Polls until nothing carrying `marker` is alive (for trees torn down in
/// the background), then asserts it.
pub async fn assert_eventually_nothing_alive(marker: &str, pids: &[u32]) {
    let deadline = Instant::now() + GONE_WAIT_LIMIT;
    while Instant::now() < deadline && !alive_with_marker(marker).is_empty() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The reaper reaps right after the kill; give it the same deadline. A
    // pid still dying (its marker already unreadable, not yet a zombie)
    // is waited for too: it may become our zombie a moment later.
    while Instant::now() < deadline
        && pids.iter().any(|p| {
            state_and_parent(*p).is_some_and(|(s, pp)| s != 'Z' || pp == std::process::id())
        })
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_nothing_alive(marker, pids);
}

/// The child's sandbox status lists `protection` as applied.
pub fn assert_applied(child: &subagent_sandbox::SandboxedChild, protection: &str) {
    let applied = &child.status().applied;
    assert!(
        applied.iter().any(|a| a == protection),
        "{protection} not applied: {applied:?}"
    );
}

/// What a probe found when the machine has a feature; under CI a missing
/// one fails the test, elsewhere it skips with a line (the workspace's one
/// copy of that rule).
pub use subagent_test_support::skip::needs;

/// A writable cgroup hierarchy with memory and pids controllers.
pub fn needs_cgroups() -> Option<CgroupKind> {
    needs(
        "a writable cgroup hierarchy with memory and pids",
        cgroup_support(),
    )
}

/// Cgroups as above whose children can be frozen: a writable v1 freezer
/// hierarchy, or v2's `cgroup.freeze` (kernel 5.2 on, in every non-root
/// cgroup).
pub fn needs_cgroup_freezer() -> Option<CgroupKind> {
    let probe = cgroup_support().and_then(|kind| {
        let freezer = match &kind {
            CgroupKind::V1 { freezer, .. } => freezer.is_some(),
            CgroupKind::V2 { dir, .. } => dir.join("cgroup.freeze").exists(),
            _ => false,
        };
        if freezer {
            Ok(kind)
        } else {
            Err(format!("no writable freezer beside {kind:?}"))
        }
    });
    needs("a cgroup freezer", probe)
}

/// Every layer of the tool sandbox: the namespaces, the filesystem view,
/// Landlock and seccomp.
pub fn needs_tool_sandbox() -> bool {
    let support = isolation_support();
    let missing: Vec<&str> = [
        support.namespaces.as_ref().err(),
        support.filesystem_view.as_ref().err(),
        support.landlock_abi.as_ref().err(),
        support.seccomp.as_ref().err(),
    ]
    .into_iter()
    .flatten()
    .map(String::as_str)
    .collect();
    let probe = if missing.is_empty() {
        Ok(())
    } else {
        Err(missing.join("; "))
    };
    needs("every layer of the tool sandbox", probe).is_some()
}

/// At least this Landlock ABI (4 brought TCP rules).
pub fn needs_landlock_abi(at_least: i32) -> bool {
    let probe = isolation_support().landlock_abi.clone().and_then(|abi| {
        (abi >= at_least)
            .then_some(())
            .ok_or_else(|| format!("the kernel offers ABI {abi}"))
    });
    needs(&format!("Landlock ABI {at_least} or later"), probe).is_some()
}

/// x86_64, for tests that call syscalls by number.
pub fn needs_x86_64() -> bool {
    let arch = std::env::consts::ARCH;
    let probe = if arch == "x86_64" {
        Ok(())
    } else {
        Err(format!("this is {arch}"))
    };
    needs("x86_64 syscall numbers", probe).is_some()
}

/// A file the test reads (or is refused).
pub fn needs_file(path: &str) -> bool {
    let probe = if std::path::Path::new(path).exists() {
        Ok(())
    } else {
        Err("it does not exist".to_owned())
    };
    needs(path, probe).is_some()
}
