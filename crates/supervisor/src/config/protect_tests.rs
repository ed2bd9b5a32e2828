use super::config_dir_inside;

#[test]
fn a_config_dir_inside_the_workspace_is_named_even_before_it_exists() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".config/subagent");
    let named = config_dir_inside(home.path(), &dir).unwrap();
    assert_eq!(
        named,
        home.path().canonicalize().unwrap().join(".config/subagent")
    );
}

#[test]
fn a_config_dir_outside_the_workspace_or_equal_to_it_is_not_named() {
    let home = tempfile::tempdir().unwrap();
    let workspace = home.path().join("project");
    std::fs::create_dir(&workspace).unwrap();
    assert_eq!(
        config_dir_inside(&workspace, &home.path().join(".config/subagent")),
        None
    );
    assert_eq!(config_dir_inside(&workspace, &workspace), None);
}

#[test]
fn a_workspace_reached_through_a_symlink_still_matches() {
    let home = tempfile::tempdir().unwrap();
    let real = home.path().join("real");
    std::fs::create_dir_all(real.join(".config")).unwrap();
    let link = home.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let named = config_dir_inside(&link, &real.join(".config/subagent")).unwrap();
    assert_eq!(named, real.canonicalize().unwrap().join(".config/subagent"));
}
