use pretty_assertions::assert_eq;
use subagent_protocol::{ProviderKind, ProviderSpec};

use super::*;
use crate::config::RawLimit;

fn operator(workspace: &Path) -> RunRequest {
    let mut request = RunRequest::new(
        "general",
        "",
        ProviderSpec::new(ProviderKind::OpenaiChat, "http://127.0.0.1:9/v1", "small"),
    );
    request.workspace_dir = workspace.to_owned();
    request.limits.memory_bytes = 256 << 20;
    request.budget.max_cost = Some(0.01);
    request.max_depth = 1;
    request
}

fn tools(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

fn ceilings(workspace: &Path, raise: RaiseSettings) -> Ceilings {
    Ceilings::new(
        operator(workspace),
        tools(&["bash_read", "subagent"]),
        raise,
        Owner::Server,
    )
}

fn limits(pairs: &[(LimitKey, &str)]) -> LimitSet {
    let mut set = LimitSet::default();
    for (key, text) in pairs {
        set.set(*key, key.parse(RawLimit::Text(text)).unwrap());
    }
    set
}

/// The operator's run with `named` applied, as a patched request is.
fn asking(workspace: &Path, named: &LimitSet) -> RunRequest {
    let mut request = operator(workspace);
    named.apply(
        &mut request.limits,
        &mut request.budget,
        &mut request.max_depth,
    );
    request
}

fn no_tools_named<'a>(named: &'a LimitSet, agent_tools: &'a [String]) -> Asked<'a> {
    Asked {
        limits: named,
        tools: false,
        agent_tools,
    }
}

#[test]
fn every_limit_asked_above_its_ceiling_is_refused_naming_limit_ask_and_ceiling() {
    let dir = tempfile::tempdir().unwrap();
    let agent_tools = tools(&["bash_read"]);
    let above = [
        (LimitKey::Timeout, "48h"),
        (LimitKey::IdleTimeout, "48h"),
        (LimitKey::Memory, "20G"),
        (LimitKey::Pids, "100000"),
        (LimitKey::StdoutLimit, "20G"),
        (LimitKey::StderrLimit, "20G"),
        (LimitKey::ReturnLimit, "20G"),
        (LimitKey::ToolTimeout, "48h"),
        (LimitKey::ToolMemory, "20G"),
        (LimitKey::ToolPids, "100000"),
        (LimitKey::ToolDisk, "20G"),
        (LimitKey::MaxTurns, "100000"),
        (LimitKey::MaxCost, "5000"),
        (LimitKey::MaxDepth, "9"),
    ];
    assert_eq!(above.len(), LimitKey::ALL.len(), "every limit has a case");
    let ceilings = ceilings(dir.path(), RaiseSettings::default());
    for (key, value) in above {
        let named = limits(&[(key, value)]);
        let mut request = asking(dir.path(), &named);
        let err = ceilings
            .admit(&mut request, &no_tools_named(&named, &agent_tools))
            .unwrap_err();
        let text = err.to_string();
        let ceiling = key
            .value_in(
                &ceilings.operator().limits,
                &ceilings.operator().budget,
                ceilings.operator().max_depth,
            )
            .unwrap()
            .to_string();
        assert!(
            matches!(err, CeilingError::Limit { key: k, .. } if k == key),
            "{key:?}: {text}"
        );
        assert!(text.contains(key.agent_key()), "{text}");
        assert!(text.contains(&format!("at most {ceiling}")), "{text}");
        assert!(text.contains(&key.flag()), "{text}");
    }
}

#[test]
fn lower_limits_pass_and_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let named = limits(&[(LimitKey::Memory, "128M"), (LimitKey::MaxCost, "0.005")]);
    let mut request = asking(dir.path(), &named);
    ceilings(dir.path(), RaiseSettings::default())
        .admit(&mut request, &no_tools_named(&named, &[]))
        .unwrap();
    assert_eq!(request.limits.memory_bytes, 128 << 20);
    assert_eq!(request.budget.max_cost, Some(0.005));
}

#[test]
fn an_agent_files_higher_limit_is_lowered_to_the_ceiling_without_a_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let mut request = operator(dir.path());
    request.limits.memory_bytes = 20 << 30;
    request.budget.max_cost = None;
    ceilings(dir.path(), RaiseSettings::default())
        .admit(&mut request, &no_tools_named(&LimitSet::default(), &[]))
        .unwrap();
    assert_eq!(request.limits.memory_bytes, 256 << 20);
    assert_eq!(request.budget.max_cost, Some(0.01));
}

#[test]
fn allow_raise_lets_exactly_the_named_limit_through() {
    let dir = tempfile::tempdir().unwrap();
    let raise = RaiseSettings::default().with([Raise::Limit(LimitKey::Timeout)]);
    let ceilings = ceilings(dir.path(), raise);
    let named = limits(&[(LimitKey::Timeout, "48h")]);
    let mut request = asking(dir.path(), &named);
    ceilings
        .admit(&mut request, &no_tools_named(&named, &[]))
        .unwrap();
    assert_eq!(request.limits.wall_timeout_ms, 48 * 3600 * 1000);
    let named = limits(&[(LimitKey::Memory, "20G")]);
    let mut request = asking(dir.path(), &named);
    assert!(
        ceilings
            .admit(&mut request, &no_tools_named(&named, &[]))
            .is_err()
    );
}

#[test]
fn named_tools_beyond_the_operators_are_refused_and_an_agents_list_is_intersected() {
    let dir = tempfile::tempdir().unwrap();
    let ceilings = ceilings(dir.path(), RaiseSettings::default());
    let none = LimitSet::default();
    let mut request = operator(dir.path());
    request.tools = Some(tools(&["bash_read", "python_execute"]));
    let err = ceilings
        .admit(
            &mut request,
            &Asked {
                limits: &none,
                tools: true,
                agent_tools: &[],
            },
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("`python_execute`"), "{err}");
    assert!(err.contains("`bash_read`, `subagent`"), "{err}");

    let implementer = tools(&["bash_find", "bash_read", "python_execute", "search_web"]);
    let mut request = operator(dir.path());
    ceilings
        .admit(&mut request, &no_tools_named(&none, &implementer))
        .unwrap();
    assert_eq!(request.tools, Some(tools(&["bash_read"])));
}

#[test]
fn switches_provider_model_and_workspace_are_refused_beyond_the_operators() {
    let dir = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let ceilings = ceilings(dir.path(), RaiseSettings::default());
    let none = LimitSet::default();
    type Change = fn(&mut RunRequest, &Path);
    let cases: [(&str, Change); 8] = [
        ("network", |r, _| r.allow_network = true),
        ("private networks", |r, _| {
            r.web.allow_private_networks = true
        }),
        ("link-local networks", |r, _| {
            r.web.allow_link_local_networks = true
        }),
        ("reasoning", |r, _| r.provider.reasoning = true),
        ("provider", |r, _| {
            r.provider.base_url = "http://attacker.example/v1".into();
        }),
        ("model `big`", |r, _| r.provider.model = "big".into()),
        ("outside", |r, other| r.workspace_dir = other.to_owned()),
        ("outside", |r, other| {
            r.workspace_dir = r
                .workspace_dir
                .join("sub/../..")
                .join(other.file_name().unwrap());
        }),
    ];
    for (expected, change) in cases {
        let mut request = operator(dir.path());
        change(&mut request, other.path());
        let err = ceilings
            .admit(&mut request, &no_tools_named(&none, &[]))
            .unwrap_err()
            .to_string();
        assert!(err.contains(expected), "{expected}: {err}");
    }
    let mut below = operator(dir.path());
    below.workspace_dir = dir.path().join("sub");
    ceilings
        .admit(&mut below, &no_tools_named(&none, &[]))
        .unwrap();
}

#[test]
fn allowed_models_may_be_picked() {
    let dir = tempfile::tempdir().unwrap();
    let ceilings = ceilings(
        dir.path(),
        RaiseSettings::default().with_models(["big".to_owned()]),
    );
    let mut request = operator(dir.path());
    request.provider.model = "big".into();
    ceilings
        .admit(&mut request, &no_tools_named(&LimitSet::default(), &[]))
        .unwrap();
}

#[test]
fn max_tokens_above_the_operators_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut op = operator(dir.path());
    op.provider.max_tokens = Some(64);
    let ceilings = Ceilings::new(
        op.clone(),
        Vec::new(),
        RaiseSettings::default(),
        Owner::Call,
    );
    let mut request = op;
    request.provider.max_tokens = Some(4096);
    let err = ceilings
        .admit(&mut request, &no_tools_named(&LimitSet::default(), &[]))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("max_tokens 4096") && err.contains("at most 64"),
        "{err}"
    );
    assert!(err.contains("--max-tokens"), "{err}");
}

#[test]
fn a_request_may_narrow_isolation_and_apply_but_never_widen_them() {
    use crate::layer::{ApplyMode, WorkspaceIsolation};
    let dir = tempfile::tempdir().unwrap();
    let named = LimitSet::default();
    let agent_tools = tools(&["bash_read"]);
    let asked = no_tools_named(&named, &agent_tools);
    // The operator's overlay with on-success: never is narrower, none wider.
    let c = ceilings(dir.path(), RaiseSettings::default());
    let mut never = asking(dir.path(), &named);
    never.apply = ApplyMode::Never;
    assert_eq!(c.admit(&mut never, &asked), Ok(()));
    let mut in_place = asking(dir.path(), &named);
    in_place.isolation = WorkspaceIsolation::None;
    let refused = c.admit(&mut in_place, &asked).unwrap_err().to_string();
    assert!(refused.contains("isolation none"), "{refused}");
    // An operator who keeps changes: a request cannot apply them.
    let mut op = operator(dir.path());
    op.apply = ApplyMode::Never;
    op.isolation = WorkspaceIsolation::None;
    let c = Ceilings::new(
        op,
        tools(&["bash_read"]),
        RaiseSettings::default(),
        Owner::Server,
    );
    let mut applying = asking(dir.path(), &named);
    applying.isolation = WorkspaceIsolation::Overlay;
    let refused = c.admit(&mut applying, &asked).unwrap_err().to_string();
    assert!(refused.contains("apply on-success"), "{refused}");
    // ...and under an in-place operator, overlay is a narrowing.
    applying.apply = ApplyMode::Never;
    assert_eq!(c.admit(&mut applying, &asked), Ok(()));
}
