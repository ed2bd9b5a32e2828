//! The move into a delegated cgroup's leaf against the real kernel: a v2
//! cgroup made by hand (as root) holds a process tree standing in for the
//! supervisor and a stranger beside it. Where no cgroup v2 hierarchy offers
//! memory and pids (every controller bound to v1), only the move is proved
//! here; the hand-down is refused either way, since the stranger stays.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use super::{CgroupFacts, KernelFacts, adopt, leaf_name, listed_pids};

/// How long the test waits for a process to appear or be gone.
const WAIT: Duration = Duration::from_secs(10);

/// The kernel's facts, with another process standing in for us.
struct As(u32);

impl CgroupFacts for As {
    fn pid(&self) -> u32 {
        self.0
    }
    fn read(&self, path: &Path) -> Result<String, String> {
        KernelFacts.read(path)
    }
    fn exists(&self, path: &Path) -> bool {
        KernelFacts.exists(path)
    }
    fn writable(&self, path: &Path) -> Result<(), String> {
        KernelFacts.writable(path)
    }
    fn parent_of(&self, pid: u32) -> Option<u32> {
        KernelFacts.parent_of(pid)
    }
}

/// The processes and the cgroup the test made; all taken down when dropped,
/// whether the test passed or not.
struct Made {
    dir: PathBuf,
    us: Child,
    stranger: Child,
}

impl Drop for Made {
    fn drop(&mut self) {
        // `us` leads its own process group, which holds its child too.
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(self.us.id() as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = self.us.kill();
        let _ = self.stranger.kill();
        let _ = self.us.wait();
        let _ = self.stranger.wait();
        let deadline = Instant::now() + WAIT;
        for dir in [self.dir.join(leaf_name(self.us.id())), self.dir.clone()] {
            // EBUSY until the orphaned child has fully exited.
            while fs::remove_dir(&dir).is_err() && dir.exists() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

/// Where a cgroup v2 hierarchy is mounted, from `/proc/self/mountinfo`.
fn v2_mount() -> Option<PathBuf> {
    let text = fs::read_to_string("/proc/self/mountinfo").ok()?;
    text.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        after
            .starts_with("cgroup2 ")
            .then(|| before.split(' ').nth(4).map(PathBuf::from))?
    })
}

fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The first child of `pid`, once it has one.
fn first_child(pid: u32) -> u32 {
    let file = format!("/proc/{pid}/task/{pid}/children");
    let deadline = Instant::now() + WAIT;
    loop {
        let text = fs::read_to_string(&file).unwrap_or_default();
        if let Some(child) = text.split_whitespace().next() {
            return child.parse().unwrap();
        }
        assert!(Instant::now() < deadline, "{pid} started no child");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn sorted(mut pids: Vec<u32>) -> Vec<u32> {
    pids.sort_unstable();
    pids
}

#[test]
fn we_and_our_descendants_move_into_the_leaf_and_a_stranger_stays_where_it_was() {
    let mount = v2_mount();
    let Some(mount) = mount.filter(|_| crate::unix::running_as_root()) else {
        assert!(!under_ci(), "this test needs root and a cgroup v2 mount");
        eprintln!("skipping: this test needs root and a cgroup v2 mount");
        return;
    };
    let dir = mount.join(format!("subagent-test-{}", std::process::id()));
    fs::create_dir(&dir).unwrap();
    let made = Made {
        dir: dir.clone(),
        us: Command::new("sh")
            .args(["-c", "sleep 60 & wait"])
            .process_group(0)
            .spawn()
            .unwrap(),
        stranger: Command::new("sleep").arg("60").spawn().unwrap(),
    };
    let (us, stranger) = (made.us.id(), made.stranger.id());
    let our_child = first_child(us);
    for pid in [us, our_child, stranger] {
        fs::write(dir.join("cgroup.procs"), pid.to_string()).unwrap();
    }

    let leaf = dir.join(leaf_name(us));
    let err = adopt(&dir, &leaf, &As(us)).unwrap_err();

    // The stranger keeps memory and pids from being handed down (and a
    // hierarchy without them refuses them anyway); nothing of it moved.
    assert!(err.contains("cannot enable memory and pids"), "{err}");
    let in_leaf = listed_pids(&fs::read_to_string(leaf.join("cgroup.procs")).unwrap());
    assert_eq!(sorted(in_leaf), sorted(vec![us, our_child]));
    let in_dir = listed_pids(&fs::read_to_string(dir.join("cgroup.procs")).unwrap());
    assert_eq!(in_dir, vec![stranger]);

    drop(made);
    for pid in [us, our_child, stranger] {
        let deadline = Instant::now() + WAIT;
        while crate::procfs::stat(pid).is_some_and(|s| !s.is_zombie()) {
            assert!(Instant::now() < deadline, "{pid} survived the test");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    assert!(!dir.exists(), "{} was not removed", dir.display());
}
