//! The four attacks that broke `--tool-disk`'s walk, held by the default
//! copy-on-write layer: a `posix_fallocate` burst, data in `O_TMPFILE`
//! files (no name to walk), inode exhaustion with empty files, and
//! files written below a directory comb deeper than any walk (each under
//! the per-file `RLIMIT_FSIZE`, together 912 MiB). The workspace is a small ext4
//! filesystem on a loop device (root only), so the host's disk is never
//! at stake; each attack reports how far it got, and the workspace's
//! filesystem keeps all but the cap.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::cow::{result_of, run_code};
use super::support::*;

const MIB: u64 = 1024 * 1024;

/// The layer's byte cap in these tests (`--tool-disk`).
const CAP: u64 = 32 * MIB;

/// Size of the workspace filesystem: room for many caps, small enough
/// that each attack, unheld, fills it.
const FS_MIB: u64 = 256;

/// A small ext4 filesystem mounted on a loop device, unmounted on drop.
struct LoopFs {
    _dir: tempfile::TempDir,
    mnt: PathBuf,
}

impl LoopFs {
    fn new(test: &str) -> Option<Self> {
        // SAFETY: geteuid cannot fail and touches no memory.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("{test}: skipped: mounting a loop filesystem needs root");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("fs.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(FS_MIB * MIB)
            .unwrap();
        let mkfs = Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(&image)
            .output();
        if !mkfs.as_ref().is_ok_and(|o| o.status.success()) {
            eprintln!("{test}: skipped: mkfs.ext4 failed or is missing: {mkfs:?}");
            return None;
        }
        let mnt = dir.path().join("ws");
        std::fs::create_dir(&mnt).unwrap();
        let mount = Command::new("mount")
            .args(["-o", "loop"])
            .arg(&image)
            .arg(&mnt)
            .output()
            .unwrap();
        if !mount.status.success() {
            eprintln!(
                "{test}: skipped: mount -o loop failed: {}",
                String::from_utf8_lossy(&mount.stderr)
            );
            return None;
        }
        Some(Self { _dir: dir, mnt })
    }

    /// Free bytes and free inodes of the filesystem.
    fn free(&self) -> (u64, u64) {
        let path = std::ffi::CString::new(self.mnt.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: statvfs fills the zeroed struct from a NUL-terminated path.
        let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: `path` is NUL-terminated and `stat` lives for the call.
        assert_eq!(unsafe { libc::statvfs(path.as_ptr(), &mut stat) }, 0);
        (stat.f_bavail * stat.f_frsize, stat.f_favail)
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mnt).status();
    }
}

/// Runs `code` with the default isolation and a `CAP` layer in `fs`;
/// returns the result and the tool's printed `key=value` report.
fn attack(fs: &LoopFs, code: &str) -> (Value, String) {
    let sessions = tempfile::tempdir().unwrap();
    let out = run_code(&fs.mnt, sessions.path(), code, &["--tool-disk", "32M"]);
    let result = result_of(&out);
    let file = result["details"]["results"][0]["sessionFile"]
        .as_str()
        .unwrap()
        .to_owned();
    let tool = check_session_file(Path::new(&file))
        .into_iter()
        .find(|l| l["type"] == "tool_result")
        .expect("a tool result line");
    assert_nothing_runs_in(&fs.mnt);
    (result, tool["output"].as_str().unwrap().to_owned())
}

/// Asserts the workspace's filesystem lost at most `most` bytes since
/// `before` (free bytes).
fn assert_lost_at_most(fs: &LoopFs, before: u64, most: u64, output: &str) {
    let (after, _) = fs.free();
    let lost = before.saturating_sub(after);
    assert!(
        lost <= most,
        "the workspace's filesystem lost {} MiB (at most {} MiB allowed); the tool said: {output}",
        lost / MIB,
        most / MIB
    );
}

/// The number after `key=` in the tool's output.
fn reported(output: &str, key: &str) -> u64 {
    let at = output
        .find(&format!("{key}="))
        .unwrap_or_else(|| panic!("no {key}= in: {output}"));
    output[at + key.len() + 1..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

/// Slack over the cap: the layer's own directories and metadata.
const SLACK: u64 = 4 * MIB;

#[test]
fn a_fallocate_burst_is_held_to_the_cap() {
    let Some(fs) = LoopFs::new("a_fallocate_burst_is_held_to_the_cap") else {
        return;
    };
    let (free_before, _) = fs.free();
    let code = r#"
import os
done = 0
for i in range(60):
    fd = os.open(f"f{i}", os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.posix_fallocate(fd, 0, 32 * 1024 * 1024)
        done += 32 * 1024 * 1024
    except OSError as e:
        pass
    os.close(fd)
print(f"allocated={done}")
"#;
    let (_, output) = attack(&fs, code);
    // What the layer held is applied when the run completes: at most the cap.
    assert_lost_at_most(&fs, free_before, CAP + SLACK, &output);
    assert!(reported(&output, "allocated") <= CAP, "{output}");
}

#[test]
fn data_in_unnamed_tmpfiles_is_held_to_the_cap() {
    let Some(fs) = LoopFs::new("data_in_unnamed_tmpfiles_is_held_to_the_cap") else {
        return;
    };
    let (free_before, _) = fs.free();
    let code = r#"
import os
chunk = b"x" * (1024 * 1024)
written, held = 0, []
try:
    for i in range(1000):
        fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600)
        held.append(fd)
        os.write(fd, chunk)
        written += len(chunk)
except OSError as e:
    print(f"stopped: {e}")
print(f"written={written}")
"#;
    let (_, output) = attack(&fs, code);
    assert!(reported(&output, "written") <= CAP, "{output}");
    let (free_after, _) = fs.free();
    assert!(
        free_before - free_after.min(free_before) <= SLACK,
        "{output}"
    );
}

#[test]
fn inode_exhaustion_is_held_to_the_layers_inode_count() {
    let Some(fs) = LoopFs::new("inode_exhaustion_is_held_to_the_layers_inode_count") else {
        return;
    };
    let (_, inodes_before) = fs.free();
    let code = r#"
made = 0
try:
    for i in range(200000):
        open(f"e{i}", "w").close()
        made += 1
except OSError as e:
    print(f"stopped: {e}")
print(f"made={made}")
"#;
    let (_, output) = attack(&fs, code);
    // 32 MiB / 4 KiB: the layer's inode count, applied when it completes.
    let (_, inodes_after) = fs.free();
    assert!(
        inodes_after + 8192 >= inodes_before,
        "{inodes_before} free inodes before, {inodes_after} after; the tool said: {output}"
    );
    assert!(reported(&output, "made") < 8192, "{output}");
}

#[test]
fn a_deep_directory_comb_neither_escapes_the_cap_nor_breaks_the_settlement() {
    let Some(fs) =
        LoopFs::new("a_deep_directory_comb_neither_escapes_the_cap_nor_breaks_the_settlement")
    else {
        return;
    };
    let (free_before, _) = fs.free();
    let code = r#"
import os
for i in range(1200):
    os.mkdir("d")
    os.chdir("d")
chunk = b"x" * (1024 * 1024)
written = 0
try:
    for j in range(57):
        with open(f"deep{j}.bin", "wb") as f:
            for _ in range(16):
                f.write(chunk)
                f.flush()
                written += len(chunk)
except OSError as e:
    print(f"stopped: {e}")
print(f"written={written}")
"#;
    let (result, output) = attack(&fs, code);
    assert_lost_at_most(&fs, free_before, SLACK, &output);
    assert!(reported(&output, "written") <= CAP, "{output}");
    let changes = &result["details"]["results"][0]["changes"];
    let refused = changes["refused"].to_string();
    assert!(refused.contains("deeper than 128 directories"), "{changes}");
}

/// An overlay on top of `lower`, mounted at `at`; unmounted on drop.
struct Overlay {
    at: PathBuf,
}

impl Overlay {
    fn new(lower: &Path, scratch: &Path, at: &Path) -> Option<Self> {
        let (upper, work) = (scratch.join("upper"), scratch.join("work"));
        for dir in [&upper, &work, &at.to_path_buf()] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let options = format!(
            "lowerdir={},upperdir={},workdir={}",
            lower.display(),
            upper.display(),
            work.display()
        );
        let out = Command::new("mount")
            .args(["-t", "overlay", "overlay", "-o", &options])
            .arg(at)
            .output()
            .unwrap();
        if !out.status.success() {
            eprintln!(
                "skipped: mount -t overlay: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            return None;
        }
        Some(Self { at: at.to_owned() })
    }
}

impl Drop for Overlay {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.at).status();
    }
}

#[test]
fn a_workspace_the_kernel_cannot_overlay_refuses_a_run_that_can_write_and_says_what_to_do() {
    // SAFETY: geteuid cannot fail and touches no memory.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: stacking overlays needs root");
        return;
    }
    // Two overlays already: the kernel stacks no third.
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base");
    std::fs::create_dir(&base).unwrap();
    std::fs::write(base.join("a.txt"), "a\n").unwrap();
    let Some(first) = Overlay::new(&base, &dir.path().join("s1"), &dir.path().join("o1")) else {
        return;
    };
    let Some(second) = Overlay::new(&first.at, &dir.path().join("s2"), &dir.path().join("o2"))
    else {
        return;
    };
    let ws = second.at.clone();
    let sessions = tempfile::tempdir().unwrap();
    let out = run_code(&ws, sessions.path(), "open('b.txt', 'w').write('b')", &[]);
    let result = result_of(&out);
    let error = &result["details"]["error"];
    assert_eq!(error["code"], "SUBAGENT_SANDBOX_UNAVAILABLE", "{result}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("overlay"), "{message}");
    assert!(message.contains("--isolation none"), "{message}");
    assert!(!ws.join("b.txt").exists());
    // `subagent doctor` says so ahead, with the same way out.
    let doctor = Command::new(binary("subagent"))
        .args(["doctor", "--json", "--workspace"])
        .arg(&ws)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let probe = report["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "workspace_layer")
        .unwrap()
        .clone();
    assert_eq!(probe["ok"], false, "{probe}");
    assert!(
        probe["fix"].as_str().unwrap().contains("--isolation none"),
        "{probe}"
    );
    // A run that cannot write needs no layer, and runs.
    let model = super::scripted_model::ScriptedModel::start(vec![
        super::scripted_model::tool_call_turn(
            "r",
            "bash_read",
            &serde_json::json!({"path": "a.txt"}),
        ),
        super::scripted_model::text_turn("read it"),
    ]);
    let out = model
        .run_command(&ws, sessions.path())
        .args(["--task", "Read a.txt.", "--tools", "bash_read", "--json"])
        .output()
        .unwrap();
    let result = result_of(&out);
    assert!(result["details"]["error"].is_null(), "{result}");
    // In place, as asked, it runs.
    let out = run_code(
        &ws,
        sessions.path(),
        "open('b.txt', 'w').write('b')",
        &["--isolation", "none"],
    );
    let result = result_of(&out);
    assert!(result["details"]["error"].is_null(), "{result}");
    assert_eq!(std::fs::read_to_string(ws.join("b.txt")).unwrap(), "b");
    assert_nothing_runs_in(&ws);
    drop(second);
    drop(first);
}
