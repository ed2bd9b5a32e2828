use super::*;

#[test]
fn a_demo_run_without_root_is_told_to_install_with_sudo() {
    let message = missing_message(&["cmake"], &["cmake"], Policy::for_demo(false), false);
    assert_eq!(
        message,
        "missing cmake, and xtask installs system packages only as root: run \
         `sudo apt-get install -y cmake`, then rerun"
    );
}

#[test]
fn a_demo_told_not_to_install_names_its_own_flag() {
    let message = missing_message(
        &["cmake", "a C++ compiler"],
        &["cmake", "g++"],
        Policy::for_demo(true),
        true,
    );
    assert_eq!(
        message,
        "missing cmake, a C++ compiler: install with `apt-get install -y cmake g++`, \
         or rerun as root without --no-install-deps to let xtask install it"
    );
}

#[test]
fn other_tasks_name_the_install_deps_flag() {
    let policy = Policy {
        may_install: false,
        ..Policy::from_flag(false)
    };
    let message = missing_message(&["pip"], &["python3-pip"], policy, true);
    assert!(
        message.contains("rerun as root with --install-deps"),
        "{message}"
    );
    assert!(!message.contains("--no-install-deps"), "{message}");
}
