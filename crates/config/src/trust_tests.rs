use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use super::*;
use crate::read_caps::{AGENT_FILE_CAP, PROJECT_FILES_CAP, TRUST_RECORD_CAP};
use crate::trust_store::{read_records, write_records};

/// A repository `repo/.git` with a workspace `repo/sub`, and the place of
/// the trust record outside it.
struct Layout {
    root: tempfile::TempDir,
}

impl Layout {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("repo/.git")).unwrap();
        std::fs::create_dir_all(root.path().join("repo/sub")).unwrap();
        Self { root }
    }

    fn repo(&self) -> PathBuf {
        std::fs::canonicalize(self.root.path().join("repo")).unwrap()
    }

    fn work(&self) -> PathBuf {
        self.repo().join("sub")
    }

    fn store(&self) -> PathBuf {
        self.root.path().join("config/subagent/trusted.json")
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.repo().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn read(&self, workspace: &Path) -> ProjectConfig {
        read_project(workspace, Some(&self.store())).unwrap()
    }

    fn trust(&self, workspace: &Path) {
        let mut records = read_records(&self.store()).unwrap();
        records.trust(&self.read(workspace));
        write_records(&self.store(), &records).unwrap();
    }
}

fn changes(project: &ProjectConfig) -> Vec<(String, Change)> {
    match project.verdict() {
        TrustVerdict::Untrusted(changes) => changes
            .iter()
            .map(|(p, c)| (project.display_path(p), *c))
            .collect(),
        other => panic!("expected Untrusted, got {other:?}"),
    }
}

#[test]
fn a_project_without_files_has_nothing_to_trust() {
    let layout = Layout::new();
    let project = layout.read(&layout.work());
    assert_eq!(project.verdict(), &TrustVerdict::NoFiles);
    assert_eq!(project.root, layout.repo());
    assert_eq!(project.warning(), None);
}

#[test]
fn files_never_trusted_are_ignored_with_one_warning_counting_them_and_the_commands() {
    let layout = Layout::new();
    layout.write(
        ".subagent/config.toml",
        "[web]\nallow_private_networks = true\n",
    );
    layout.write(
        ".subagent/agents/explorer.md",
        "---\nname: explorer\n---\np\n",
    );
    layout.write("sub/.claude/agents/c.md", "---\nname: c\n---\np\n");
    let project = layout.read(&layout.work());
    assert_eq!(
        changes(&project),
        vec![
            ("sub/.claude/agents/c.md".to_owned(), Change::New),
            (".subagent/config.toml".to_owned(), Change::New),
            (".subagent/agents/explorer.md".to_owned(), Change::New),
        ]
    );
    assert!(project.trusted_files().is_empty());
    assert_eq!(project.trusted_config(), None);
    let warning = project.warning().unwrap();
    assert_eq!(warning.lines().count(), 1, "{warning}");
    for part in [
        "3 files not trusted",
        &format!("of {} ", layout.repo().display()),
        &format!("`subagent trust --list {}`", layout.work().display()),
        &format!("`subagent trust {}`", layout.work().display()),
    ] {
        assert!(warning.contains(part), "{part} not in {warning}");
    }
    // The files are behind `trust --list DIR`, not in the warning.
    assert!(!warning.contains("explorer.md"), "{warning}");
    assert_eq!(
        project.changes_listing(),
        [
            "sub/.claude/agents/c.md (not trusted)",
            ".subagent/config.toml (not trusted)",
            ".subagent/agents/explorer.md (not trusted)",
        ]
    );
}

/// The warning of a project of 434 agent files was one line of about
/// 30 KB naming each: it stays the same short line however many there are.
#[test]
fn the_warning_of_hundreds_of_untrusted_files_is_one_short_line() {
    let layout = Layout::new();
    for i in 0..434 {
        layout.write(
            &format!(".claude/agents/agent-with-a-long-descriptive-name-{i:03}.md"),
            "---\nname: a\n---\np\n",
        );
    }
    let project = layout.read(&layout.work());
    let warning = project.warning().unwrap();
    assert!(warning.contains("434 files not trusted"), "{warning}");
    let paths =
        2 * layout.work().display().to_string().len() + layout.repo().display().to_string().len();
    assert!(
        warning.len() < paths + 400,
        "{} bytes: {warning}",
        warning.len()
    );
    assert_eq!(project.changes_listing().len(), 434);
}

#[test]
fn trusted_files_count_until_one_changes_appears_or_goes() {
    let layout = Layout::new();
    let config = layout.write(".subagent/config.toml", "max_concurrent = 2\n");
    let agent = layout.write(".subagent/agents/a.md", "---\nname: a\n---\np\n");
    layout.trust(&layout.work());
    let project = layout.read(&layout.work());
    assert_eq!(project.verdict(), &TrustVerdict::Trusted);
    assert_eq!(project.trusted_files().len(), 2);
    assert_eq!(
        project.trusted_config().map(|f| f.text.as_str()),
        Some("max_concurrent = 2\n")
    );

    std::fs::write(&config, "max_concurrent = 3\n").unwrap();
    assert_eq!(
        changes(&layout.read(&layout.work())),
        vec![(".subagent/config.toml".to_owned(), Change::Changed)]
    );
    std::fs::write(&config, "max_concurrent = 2\n").unwrap();
    assert_eq!(
        layout.read(&layout.work()).verdict(),
        &TrustVerdict::Trusted
    );

    layout.write(".claude/agents/new.md", "---\nname: n\n---\np\n");
    assert_eq!(
        changes(&layout.read(&layout.work())),
        vec![(".claude/agents/new.md".to_owned(), Change::New)]
    );
    std::fs::remove_file(layout.repo().join(".claude/agents/new.md")).unwrap();

    std::fs::remove_file(&agent).unwrap();
    assert_eq!(
        changes(&layout.read(&layout.work())),
        vec![(".subagent/agents/a.md".to_owned(), Change::Removed)]
    );
}

#[test]
fn trust_from_a_subdirectory_keeps_the_root_trusted_and_revoke_forgets_both() {
    let layout = Layout::new();
    layout.write(".subagent/config.toml", "max_concurrent = 2\n");
    layout.trust(&layout.repo());
    // The workspace below sees one more file: not trusted yet.
    layout.write("sub/.subagent/agents/s.md", "---\nname: s\n---\np\n");
    assert_eq!(
        changes(&layout.read(&layout.work())),
        vec![("sub/.subagent/agents/s.md".to_owned(), Change::New)]
    );
    layout.trust(&layout.work());
    assert_eq!(
        layout.read(&layout.work()).verdict(),
        &TrustVerdict::Trusted
    );
    // The root does not look into sub/, so its verdict is unchanged.
    assert_eq!(
        layout.read(&layout.repo()).verdict(),
        &TrustVerdict::Trusted
    );
    let mut records = read_records(&layout.store()).unwrap();
    assert_eq!(records.projects.len(), 1);
    assert!(records.revoke(&layout.repo()));
    assert!(!records.revoke(&layout.repo()));
    write_records(&layout.store(), &records).unwrap();
    assert!(matches!(
        layout.read(&layout.work()).verdict(),
        TrustVerdict::Untrusted(_)
    ));
}

#[test]
fn a_symlinked_workspace_is_judged_by_its_real_path() {
    let layout = Layout::new();
    layout.write(".subagent/config.toml", "max_concurrent = 2\n");
    layout.trust(&layout.work());
    let link = layout.root.path().join("link");
    std::os::unix::fs::symlink(layout.work(), &link).unwrap();
    let project = layout.read(&link);
    assert_eq!(project.verdict(), &TrustVerdict::Trusted);
    assert_eq!(project.workspace, layout.work());
}

#[test]
fn without_a_record_place_nothing_is_trusted_and_the_warning_says_why() {
    let layout = Layout::new();
    layout.write(".subagent/config.toml", "max_concurrent = 2\n");
    let project = read_project(&layout.work(), None).unwrap();
    assert!(project.trusted_files().is_empty());
    let warning = project.warning().unwrap();
    assert!(warning.contains("HOME or XDG_CONFIG_HOME"), "{warning}");
}

#[test]
fn a_record_that_is_not_json_is_an_error_naming_it() {
    let layout = Layout::new();
    std::fs::create_dir_all(layout.store().parent().unwrap()).unwrap();
    std::fs::write(layout.store(), "{not json").unwrap();
    let error = read_project(&layout.work(), Some(&layout.store())).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains(&layout.store().display().to_string())
            && message.contains("fix it or delete it"),
        "{message}"
    );
}

#[test]
fn a_file_that_is_not_utf8_is_listed_not_fatal() {
    let layout = Layout::new();
    let path = layout.repo().join(".subagent/agents/bin.md");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, [0xff, 0xfe, 0x00]).unwrap();
    let project = layout.read(&layout.work());
    assert_eq!(
        changes(&project),
        vec![(".subagent/agents/bin.md".to_owned(), Change::New)]
    );
}

#[test]
fn the_trust_command_quotes_a_path_the_shell_would_split() {
    assert_eq!(shell_word("/home/me/proj"), "/home/me/proj");
    assert_eq!(shell_word("/tmp/my proj"), "'/tmp/my proj'");
    assert_eq!(shell_word("/tmp/it's"), r"'/tmp/it'\''s'");
}

fn skipped(project: &ProjectConfig) -> Vec<(String, String)> {
    project
        .skipped()
        .iter()
        .map(|f| (project.display_path(&f.path), f.reason.clone()))
        .collect()
}

#[test]
fn links_fifos_and_files_over_their_cap_are_skipped_unread_with_why() {
    let layout = Layout::new();
    let outside = layout.root.path().join("outside.md");
    std::fs::write(&outside, "---\nname: leak\n---\nsecret\n").unwrap();
    let agents = layout.repo().join(".subagent/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::os::unix::fs::symlink(&outside, agents.join("link.md")).unwrap();
    nix::unistd::mkfifo(&agents.join("fifo.md"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    std::fs::File::create(agents.join("huge.md"))
        .unwrap()
        .set_len(AGENT_FILE_CAP + 1)
        .unwrap();
    std::os::unix::fs::symlink("/dev/zero", layout.repo().join(".subagent/config.toml")).unwrap();
    layout.write(".subagent/agents/ok.md", "---\nname: ok\n---\np\n");

    let project = layout.read(&layout.work());
    let files: Vec<String> = project
        .files()
        .iter()
        .map(|f| project.display_path(&f.path))
        .collect();
    assert_eq!(files, [".subagent/agents/ok.md"]);
    let reasons = skipped(&project);
    let names: Vec<&str> = reasons.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        names,
        [
            ".subagent/config.toml",
            ".subagent/agents/fifo.md",
            ".subagent/agents/huge.md",
            ".subagent/agents/link.md"
        ]
    );
    assert!(reasons[0].1.contains("is a symbolic link"), "{reasons:?}");
    assert!(reasons[1].1.contains("is a FIFO"), "{reasons:?}");
    assert!(reasons[2].1.contains("over the 256K"), "{reasons:?}");
    assert!(reasons[3].1.contains("is a symbolic link"), "{reasons:?}");
    assert_eq!(project.skipped_config_warnings().len(), 1);
}

#[test]
fn a_trusted_file_replaced_by_one_over_its_cap_makes_the_project_untrusted() {
    let layout = Layout::new();
    let path = layout.write(".subagent/agents/a.md", "---\nname: a\n---\np\n");
    layout.trust(&layout.work());
    assert_eq!(
        layout.read(&layout.work()).verdict(),
        &TrustVerdict::Trusted
    );
    std::fs::File::create(&path)
        .unwrap()
        .set_len(AGENT_FILE_CAP + 1)
        .unwrap();
    let project = layout.read(&layout.work());
    assert_eq!(
        changes(&project),
        [(".subagent/agents/a.md".to_owned(), Change::Removed)]
    );
}

#[test]
fn files_past_what_the_project_may_take_together_are_skipped() {
    let layout = Layout::new();
    let agents = layout.repo().join(".subagent/agents");
    std::fs::create_dir_all(&agents).unwrap();
    // Each under its own cap, together over the project's.
    let each = AGENT_FILE_CAP - 1;
    let count = PROJECT_FILES_CAP / each + 2;
    for n in 0..count {
        std::fs::write(
            agents.join(format!("a{n:03}.md")),
            vec![b'x'; each as usize],
        )
        .unwrap();
    }
    let project = layout.read(&layout.work());
    let read: u64 = project.files().iter().map(|f| f.text.len() as u64).sum();
    assert!(read <= PROJECT_FILES_CAP, "{read}");
    assert_eq!(project.files().len() as u64, PROJECT_FILES_CAP / each);
    let reasons = skipped(&project);
    assert_eq!(reasons.len() as u64, count - PROJECT_FILES_CAP / each);
    assert!(
        reasons[0].1.contains("of the 8M they may take together"),
        "{reasons:?}"
    );
}

#[test]
fn a_trust_record_that_is_a_link_a_fifo_or_too_large_is_refused_naming_it() {
    let layout = Layout::new();
    let store = layout.store();
    std::fs::create_dir_all(store.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &store).unwrap();
    let err = read_project(&layout.work(), Some(&store)).unwrap_err();
    assert!(
        err.to_string().starts_with(&format!(
            "the trust record {} is a symbolic link",
            store.display()
        )),
        "{err}"
    );
    std::fs::remove_file(&store).unwrap();
    std::fs::File::create(&store)
        .unwrap()
        .set_len(TRUST_RECORD_CAP + 1)
        .unwrap();
    let err = read_project(&layout.work(), Some(&store)).unwrap_err();
    assert!(err.to_string().contains("over the 4M"), "{err}");
}
