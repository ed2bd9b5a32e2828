use std::ffi::OsString;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use super::catalog::AgentSource;
use super::discover::{DiscoverError, discover_catalog, user_agents_dir};
use crate::{read_project, read_project_trusting_all};

fn write_agent(dir: &Path, file: &str, name: &str, prompt: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(file);
    std::fs::write(
        &path,
        format!("---\nname: {name}\ndescription: d\n---\n{prompt}\n"),
    )
    .unwrap();
    path
}

/// repo/.git, repo/sub/work (the workspace), a user dir beside them.
fn layout() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let repo = root.path().join("repo");
    let work = repo.join("sub/work");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let user = root.path().join("config/subagent/agents");
    (root, repo, work, user)
}

fn source_of(catalog: &super::AgentCatalog, name: &str) -> AgentSource {
    catalog.get(name).unwrap().source.clone()
}

#[test]
fn agents_lookup_prefers_project_over_user_over_builtin() {
    let (_root, repo, work, user) = layout();
    let project = write_agent(
        &repo.join(".subagent/agents"),
        "a.md",
        "reviewer",
        "project",
    );
    write_agent(&user, "a.md", "reviewer", "user");
    let mine = write_agent(&user, "b.md", "mine", "user");
    let catalog = discover_catalog(&read_project_trusting_all(&work), Some(&user)).unwrap();
    assert_eq!(source_of(&catalog, "reviewer"), AgentSource::File(project));
    assert_eq!(catalog.get("reviewer").unwrap().system_prompt, "project");
    assert_eq!(source_of(&catalog, "mine"), AgentSource::File(mine));
    assert_eq!(source_of(&catalog, "general"), AgentSource::BuiltIn);
    assert_eq!(
        catalog.names().iter().filter(|n| **n == "reviewer").count(),
        1
    );
}

#[test]
fn agents_lookup_takes_the_nearest_dir_first_and_subagent_before_claude() {
    let (_root, repo, work, _user) = layout();
    write_agent(&repo.join(".subagent/agents"), "x.md", "x", "far");
    let near = write_agent(&repo.join("sub/.claude/agents"), "x.md", "x", "near claude");
    let near_own = write_agent(&repo.join("sub/.subagent/agents"), "y.md", "y", "own");
    write_agent(&repo.join("sub/.claude/agents"), "y.md", "y", "claude");
    let catalog = discover_catalog(&read_project_trusting_all(&work), None).unwrap();
    assert_eq!(source_of(&catalog, "x"), AgentSource::File(near));
    assert_eq!(source_of(&catalog, "y"), AgentSource::File(near_own));
}

#[test]
fn agents_lookup_stops_at_the_repository_root() {
    let (root, _repo, work, _user) = layout();
    write_agent(
        &root.path().join(".subagent/agents"),
        "o.md",
        "outside",
        "p",
    );
    let catalog = discover_catalog(&read_project_trusting_all(&work), None).unwrap();
    assert!(catalog.get("outside").is_none());
}

#[test]
fn a_malformed_agents_file_is_skipped_and_its_name_refused_with_the_reason() {
    let (_root, repo, work, user) = layout();
    let dir = repo.join(".subagent/agents");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.md"), "---\nname: [x\n---\n").unwrap();
    // A broken file of a built-in's name must not fall back to the built-in.
    std::fs::write(dir.join("general.md"), "no frontmatter\n").unwrap();
    let good = write_agent(&dir, "good.md", "good", "p");
    // Shadowed by the project's `good`: never reported.
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("good.md"),
        "---\nname: good\nmaxTurns: lots\n---\n",
    )
    .unwrap();
    let catalog = discover_catalog(&read_project_trusting_all(&work), Some(&user)).unwrap();
    assert_eq!(source_of(&catalog, "good"), AgentSource::File(good));
    assert!(catalog.get("general").is_none());
    assert_eq!(source_of(&catalog, "explorer"), AgentSource::BuiltIn);
    let skipped: Vec<_> = catalog
        .unreadable()
        .iter()
        .map(|f| (f.path.clone(), f.name.clone()))
        .collect();
    assert_eq!(
        skipped,
        [
            (dir.join("bad.md"), Some("bad".to_owned())),
            (dir.join("general.md"), Some("general".to_owned())),
        ]
    );
    assert!(
        catalog.unreadable()[0].reason.contains("bad.md:"),
        "{:?}",
        catalog.unreadable()
    );
    let refusal = catalog.unknown_message("general");
    assert!(
        refusal.contains("general.md") && refusal.contains("no frontmatter"),
        "{refusal}"
    );
    assert!(!catalog.unknown_message("other").contains("cannot be read"));
}

#[test]
fn an_unlistable_user_agents_dir_is_an_error() {
    let (_root, _repo, work, user) = layout();
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    // A file where the directory should be cannot be listed.
    std::fs::write(&user, "").unwrap();
    let err = discover_catalog(&read_project_trusting_all(&work), Some(&user)).unwrap_err();
    assert!(matches!(err, DiscoverError::ListDir { .. }), "{err:?}");
}

#[test]
fn an_untrusted_project_contributes_no_agent_and_its_malformed_file_no_error() {
    let (root, repo, work, user) = layout();
    write_agent(
        &repo.join(".subagent/agents"),
        "e.md",
        "explorer",
        "every tool",
    );
    std::fs::write(repo.join(".subagent/agents/bad.md"), "---\nname: [x\n---\n").unwrap();
    let mine = write_agent(&user, "m.md", "mine", "user");
    let store = root.path().join("config/subagent/trusted.json");
    let project = read_project(&work, Some(&store)).unwrap();
    let catalog = discover_catalog(&project, Some(&user)).unwrap();
    assert_eq!(source_of(&catalog, "explorer"), AgentSource::BuiltIn);
    assert_eq!(source_of(&catalog, "mine"), AgentSource::File(mine));
}

#[test]
fn user_agents_dir_prefers_xdg_config_home_over_home() {
    let some = |s: &str| Some(OsString::from(s));
    assert_eq!(
        user_agents_dir(some("/x"), some("/h")),
        Some(PathBuf::from("/x/subagent/agents"))
    );
    assert_eq!(
        user_agents_dir(None, some("/h")),
        Some(PathBuf::from("/h/.config/subagent/agents"))
    );
    // A relative XDG_CONFIG_HOME is invalid per the spec and ignored.
    assert_eq!(
        user_agents_dir(some("rel"), some("/h")),
        Some(PathBuf::from("/h/.config/subagent/agents"))
    );
    assert_eq!(user_agents_dir(None, None), None);
}
