use super::*;

fn flags(parallel: bool, chain: bool, concurrency: Option<usize>) -> ModeFlags<'static> {
    ModeFlags {
        tasks: &[],
        tasks_file: None,
        parallel,
        chain,
        concurrency,
        max_concurrent: 16,
    }
}

fn tasks(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn a_tasks_file_has_one_task_per_non_empty_line() {
    assert_eq!(
        tasks_from_file("first\n\n  second  \n\t\nthird"),
        tasks(&["first", "second", "third"])
    );
}

#[test]
fn parallel_defaults_to_the_per_call_concurrency() {
    let plan = plan_from(tasks(&["a", "b"]), &flags(true, false, None)).unwrap();
    assert_eq!(
        plan,
        TaskPlan {
            mode: RunMode::Parallel,
            tasks: tasks(&["a", "b"]),
            concurrency: Some(4)
        }
    );
}

#[test]
fn the_default_concurrency_is_lowered_to_a_smaller_global_limit() {
    let flags = ModeFlags {
        max_concurrent: 1,
        ..flags(true, false, None)
    };
    let plan = plan_from(tasks(&["a", "b"]), &flags).unwrap();
    assert_eq!(
        plan,
        TaskPlan {
            mode: RunMode::Parallel,
            tasks: tasks(&["a", "b"]),
            concurrency: Some(1)
        }
    );
}

#[test]
fn concurrency_above_the_global_limit_is_a_usage_error_naming_the_maximum() {
    let e = plan_from(tasks(&["a"]), &flags(true, false, Some(999))).unwrap_err();
    assert!(e.to_string().contains("1 to 16"), "{e}");
}

#[test]
fn several_tasks_without_a_mode_are_refused_with_the_two_choices() {
    let e = plan_from(tasks(&["a", "b"]), &flags(false, false, None)).unwrap_err();
    assert!(e.to_string().contains("--parallel"), "{e}");
    assert!(e.to_string().contains("--chain"), "{e}");
    assert_eq!(
        plan_from(tasks(&["a"]), &flags(false, false, None)).unwrap(),
        TaskPlan::single("a".into())
    );
    assert!(plan_from(tasks(&["a"]), &flags(false, true, Some(2))).is_err());
}
