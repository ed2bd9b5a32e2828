//! Config files, agent files and the trust record as untrusted input
//! (issue 32, attack 8's first item and the files the supervisor reads
//! back), through the real `subagent run`: sparse files of 250 MiB planted
//! where agent files are looked for, links (to `/dev/zero`, to a file
//! outside) and FIFOs in place of the user's config or the trust record,
//! and a link planted at the trust record's temporary name.
//!
//! Every command is watched ([`run_watched`]): one that hangs or fills
//! memory is killed and its test fails, instead of taking the machine
//! with it. The peak RSS bound is the supervisor's 64 MiB.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::agents_cmd::Project;
use super::planted::plant_link_named_for_child;
use super::support::*;
use super::watched::{Watched, run_watched};

const MIB: u64 = 1024 * 1024;

/// What the supervisor may hold, whatever the files it reads.
const MEMORY_BOUND: u64 = 64 * MIB;

/// Size of each planted sparse file: on disk almost nothing, read 250 MiB.
const SPARSE: u64 = 250 * MIB;

/// Long enough for a run of the fixture on a loaded machine; a read that
/// waits on a FIFO waits for ever.
const DEADLINE: Duration = Duration::from_secs(60);

/// A sparse file of [`SPARSE`] bytes at `path`.
fn sparse(path: &Path) {
    std::fs::File::create(path)
        .unwrap()
        .set_len(SPARSE)
        .unwrap();
}

/// `subagent run` of the fixture in `workspace`, HOME at `home` (so the
/// user's config dir is `home/.config/subagent`), watched.
fn run_fixture(home: &Path, workspace: &Path, sessions: &Path) -> Watched {
    let mut command = fixture_cli(sessions);
    command
        .arg("--workspace")
        .arg(workspace)
        .args(["--task", "fixture:success", "--json"])
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME");
    let watched = run_watched(&mut command, DEADLINE);
    assert_nothing_runs_in(workspace);
    watched
}

fn assert_small_and_prompt(watched: &Watched, what: &str) {
    assert!(
        watched.killed.is_none(),
        "{what}: killed, {}: {}",
        watched.killed.unwrap_or_default(),
        watched.stderr
    );
    assert!(
        watched.peak_rss < MEMORY_BOUND,
        "{what}: peak RSS {} MiB, over {} MiB: {}",
        watched.peak_rss / MIB,
        MEMORY_BOUND / MIB,
        watched.stderr
    );
}

#[test]
fn sparse_agent_files_planted_where_agents_are_looked_for_are_skipped_unread() {
    let project = Project::new();
    let home = project.root.path().join("home");
    let agents = project.repo().join(".subagent/agents");
    std::fs::create_dir_all(&agents).unwrap();
    let mut planted: Vec<PathBuf> = (0..12)
        .map(|n| agents.join(format!("planted-{n:02}.md")))
        .collect();
    for path in &planted {
        sparse(path);
    }
    // The user's own agents dir, and a project config, too.
    let user_agents = home.join(".config/subagent/agents");
    std::fs::create_dir_all(&user_agents).unwrap();
    planted.push(user_agents.join("user-planted.md"));
    sparse(planted.last().unwrap());
    // Links and FIFOs: followed, they would lead to a big file outside the
    // project, or to a read that never ends.
    let outside = project.root.path().join("outside.md");
    sparse(&outside);
    let linked = agents.join("linked.md");
    symlink(&outside, &linked).unwrap();
    let config = project.repo().join(".subagent/config.toml");
    symlink(&outside, &config).unwrap();
    let zero = agents.join("zero.md");
    symlink("/dev/zero", &zero).unwrap();
    let claude = project.repo().join(".claude/agents");
    std::fs::create_dir_all(&claude).unwrap();
    let pipe = claude.join("fifo.md");
    make_fifo(&pipe);

    let sessions = project.root.path().join("sessions");
    let watched = run_fixture(&home, &project.repo(), &sessions);
    assert_small_and_prompt(&watched, "run");
    let err = &watched.stderr;
    assert_eq!(watched.code(), Some(0), "{err}");
    let result: serde_json::Value = serde_json::from_str(&watched.stdout).unwrap();
    assert_valid_result(&result);
    assert_children_reaped(&result);
    for path in &planted {
        assert!(
            err.contains(&format!(
                "agent file skipped: {} is {SPARSE} bytes, over the 256K",
                path.display()
            )),
            "{}: {err}",
            path.display()
        );
    }
    for link in [&linked, &zero] {
        assert!(
            err.contains(&format!(
                "agent file skipped: {} is a symbolic link",
                link.display()
            )),
            "{err}"
        );
    }
    assert!(
        err.contains(&format!("{} is a FIFO", pipe.display())),
        "{err}"
    );
    assert!(
        err.contains(&format!("{} is a symbolic link", config.display())),
        "{err}"
    );

    // `agents ls --warnings` names them the same way.
    let mut command = Command::new(binary("subagent"));
    command
        .args(["agents", "ls", "--warnings"])
        .current_dir(project.repo())
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME");
    let listed = run_watched(&mut command, DEADLINE);
    assert_small_and_prompt(&listed, "agents ls");
    assert_eq!(listed.code(), Some(0), "{}", listed.stderr);
    assert!(
        listed.stderr.contains(&format!(
            "agent file skipped: {} is {SPARSE} bytes",
            planted[0].display()
        )),
        "{}",
        listed.stderr
    );
}

/// What is put in place of a file the supervisor reads back.
#[derive(Debug, Clone, Copy)]
enum Plant {
    Fifo,
    LinkToDevZero,
    /// A link to a well-formed file elsewhere (one a tool could write).
    LinkToFile,
    Sparse,
}

impl Plant {
    fn make(self, path: &Path, well_formed: &str) {
        match self {
            Plant::Fifo => make_fifo(path),
            Plant::LinkToDevZero => symlink("/dev/zero", path).unwrap(),
            Plant::LinkToFile => {
                let elsewhere = path.with_extension("elsewhere");
                std::fs::write(&elsewhere, well_formed).unwrap();
                symlink(&elsewhere, path).unwrap();
            }
            Plant::Sparse => sparse(path),
        }
    }

    /// What the refusal says about it; `cap` is the file's.
    fn reason(self, cap: &str) -> String {
        match self {
            Plant::Fifo => "is a FIFO, not a regular file".to_owned(),
            Plant::LinkToDevZero | Plant::LinkToFile => "is a symbolic link".to_owned(),
            Plant::Sparse => format!("is {SPARSE} bytes, over the {cap}"),
        }
    }
}

#[test]
fn the_user_config_and_the_trust_record_are_refused_as_links_fifos_or_huge_files() {
    let files = [
        // (name in the user's config dir, its cap, a well-formed file)
        ("config.toml", "1M", "max_concurrent = 4\n"),
        ("trusted.json", "4M", r#"{"version": 1, "projects": []}"#),
    ];
    let plants = [
        Plant::Fifo,
        Plant::LinkToDevZero,
        Plant::LinkToFile,
        Plant::Sparse,
    ];
    for (name, cap, well_formed) in files {
        for plant in plants {
            let what = format!("{name} as {plant:?}");
            let tmp = tempfile::tempdir().unwrap();
            let (home, workspace) = (tmp.path().join("home"), tmp.path().join("ws"));
            let dir = home.join(".config/subagent");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::create_dir_all(&workspace).unwrap();
            let path = dir.join(name);
            plant.make(&path, well_formed);

            let watched = run_fixture(&home, &workspace, &tmp.path().join("sessions"));
            assert_small_and_prompt(&watched, &what);
            let err = &watched.stderr;
            assert_eq!(watched.code(), Some(2), "{what}: {err}");
            assert!(
                err.contains(&format!("{} {}", path.display(), plant.reason(cap))),
                "{what}: {err}"
            );
            assert!(
                jsonl_files(&tmp.path().join("sessions")).is_empty(),
                "{what}: nothing runs"
            );
        }
    }
}

#[test]
fn subagent_trust_does_not_write_through_a_link_planted_at_its_temporary_record() {
    let project = Project::new();
    std::fs::create_dir_all(project.repo().join(".subagent")).unwrap();
    std::fs::write(
        project.repo().join(".subagent/config.toml"),
        "max_concurrent = 4\n",
    )
    .unwrap();
    let home = project.root.path().join("home");
    let dir = home.join(".config/subagent");
    std::fs::create_dir_all(&dir).unwrap();
    let outside = project.root.path().join("outside.txt");
    std::fs::write(&outside, "precious\n").unwrap();

    let mut command = Command::new(binary("subagent"));
    command
        .arg("trust")
        .arg(project.repo())
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME");
    plant_link_named_for_child(&mut command, &dir.join(".trusted.json."), ".tmp", &outside);
    let watched = run_watched(&mut command, DEADLINE);
    assert_small_and_prompt(&watched, "trust");
    assert_eq!(watched.code(), Some(0), "{}", watched.stderr);
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious\n");
    let record = std::fs::read_to_string(dir.join("trusted.json")).unwrap();
    assert!(record.contains("config.toml"), "{record}");
}
