use super::*;

#[test]
fn a_group_that_could_not_run_exits_2_and_a_missed_target_1() {
    assert!(ending(Some(0)).is_ok());
    let missed = ending(Some(1)).unwrap_err();
    assert_eq!(exit_code(&missed), 1, "{missed:#}");
    let broken = ending(Some(2))
        .context("subagent-bench ended: exit status: 2")
        .unwrap_err();
    assert_eq!(exit_code(&broken), GROUP_COULD_NOT_RUN, "{broken:#}");
    assert_eq!(GROUP_COULD_NOT_RUN, 2);
    let killed = ending(None).unwrap_err();
    assert_eq!(exit_code(&killed), 1, "{killed:#}");
}
