use std::collections::HashSet;

use pretty_assertions::assert_eq;
use subagent_protocol::{ProviderKind, ProviderSpec};

use super::*;
use crate::config::{LimitKey, LimitValue};

fn base() -> RunOverrides {
    let mut limits = LimitSet::default();
    limits.set(LimitKey::Timeout, LimitValue::Ms(60_000));
    limits.set(LimitKey::MaxTurns, LimitValue::Count(5));
    RunOverrides {
        agent: Some("general".into()),
        provider: Some("openai-chat".into()),
        model: Some("flag-model".into()),
        limits,
        ..RunOverrides::default()
    }
}

#[test]
fn a_patch_replaces_the_settings_it_names_and_keeps_the_rest() {
    let mut limits = LimitSet::default();
    limits.set(LimitKey::Timeout, LimitValue::Ms(2_000));
    let patch = RequestPatch {
        model: Some("line-model".into()),
        base_url: Some("http://127.0.0.1:1/v1".into()),
        limits,
        ..RequestPatch::default()
    };
    let mut expected = base();
    expected.model = Some("line-model".into());
    expected.base_url = Some("http://127.0.0.1:1/v1".into());
    expected
        .limits
        .set(LimitKey::Timeout, LimitValue::Ms(2_000));
    assert_eq!(patch.apply(&base()), expected);
    assert_eq!(RequestPatch::default().apply(&base()), base());
}

#[test]
fn a_patch_puts_its_request_settings_into_the_prepared_request() {
    let provider = ProviderSpec::new(ProviderKind::OpenaiChat, "http://127.0.0.1:9/v1", "m");
    let mut request = RunRequest::new("general", String::new(), provider);
    request.workspace_dir = "/srv/project".into();
    request.tools = Some(vec!["bash_read".into()]);
    let patch = RequestPatch {
        task: Some("Name a prime".into()),
        output_schema_json: Some("{}".into()),
        workspace: Some("sub".into()),
        allow_network: Some(true),
        max_tokens: Some(64),
        ..RequestPatch::default()
    };
    patch.apply_to(&mut request);
    assert_eq!(request.task, "Name a prime");
    assert_eq!(request.output_schema_json.as_deref(), Some("{}"));
    assert_eq!(
        request.workspace_dir,
        std::path::Path::new("/srv/project/sub")
    );
    assert!(request.allow_network);
    assert_eq!(request.provider.max_tokens, Some(64));
    // Not named by the patch: as prepared.
    assert_eq!(request.tools, Some(vec!["bash_read".to_owned()]));
}

#[test]
fn equal_overrides_are_one_key_and_a_different_limit_is_another() {
    let mut dollars_zero = base();
    dollars_zero
        .limits
        .set(LimitKey::MaxCost, LimitValue::Dollars(0.0));
    let mut dollars_negative_zero = base();
    dollars_negative_zero
        .limits
        .set(LimitKey::MaxCost, LimitValue::Dollars(-0.0));
    let mut other = base();
    other.limits.set(LimitKey::Timeout, LimitValue::Ms(1));
    let keys: HashSet<RunOverrides> = [base(), base(), dollars_zero, dollars_negative_zero, other]
        .into_iter()
        .collect();
    assert_eq!(keys.len(), 3);
}
