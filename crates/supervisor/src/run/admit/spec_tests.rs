use super::*;

#[test]
fn a_task_too_large_for_a_frame_is_refused_with_its_size() {
    let request = RunRequest::new(
        "general",
        "x".repeat(17 * 1024 * 1024),
        subagent_protocol::ProviderSpec::new(
            subagent_protocol::ProviderKind::OpenaiChat,
            "http://127.0.0.1:9/v1",
            "m",
        ),
    );
    let agent = crate::agents::AgentCatalog::builtin()
        .get("general")
        .unwrap()
        .clone();
    let spec = task_spec(&request, &agent, "00000000", SandboxPolicy::BestEffort);
    let message = check_spec_fits(&spec).unwrap_err();
    assert!(message.contains("too large"), "{message}");
    assert!(message.contains("the limit is 16777216 bytes"), "{message}");
    let small = TaskSpec {
        task: "small".into(),
        ..spec
    };
    assert_eq!(check_spec_fits(&small), Ok(()));
}
