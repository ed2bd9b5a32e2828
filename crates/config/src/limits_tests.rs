use subagent_protocol::{Budget, Limits};

use super::limits::{LimitKey, LimitSet, LimitValue, RawLimit};

#[test]
fn every_key_has_one_config_name_one_agent_name_and_one_flag() {
    let mut config: Vec<_> = LimitKey::ALL.map(LimitKey::config_key).to_vec();
    let mut agent: Vec<_> = LimitKey::ALL.map(LimitKey::agent_key).to_vec();
    config.dedup();
    agent.dedup();
    assert_eq!(config.len(), LimitKey::ALL.len());
    assert_eq!(agent.len(), LimitKey::ALL.len());
    for key in LimitKey::ALL {
        assert_eq!(LimitKey::from_config_key(key.config_key()), Some(key));
        assert_eq!(
            key.flag(),
            format!("--{}", key.config_key().replace('_', "-"))
        );
    }
    assert_eq!(LimitKey::IdleTimeout.agent_key(), "idleTimeout");
    assert_eq!(LimitKey::IdleTimeout.flag(), "--idle-timeout");
}

#[test]
fn values_are_read_with_units_from_text_and_numbers() {
    let parse = |key: LimitKey, raw| key.parse(raw);
    assert_eq!(
        parse(LimitKey::Timeout, RawLimit::Text("15m")),
        Ok(LimitValue::Ms(900_000))
    );
    assert_eq!(
        parse(LimitKey::Timeout, RawLimit::Integer(90)),
        Ok(LimitValue::Ms(90_000))
    );
    assert_eq!(
        parse(LimitKey::Memory, RawLimit::Text("512M")),
        Ok(LimitValue::Bytes(512 * 1024 * 1024))
    );
    assert_eq!(
        parse(LimitKey::Pids, RawLimit::Integer(64)),
        Ok(LimitValue::Count(64))
    );
    assert_eq!(
        parse(LimitKey::MaxCost, RawLimit::Float(0.5)),
        Ok(LimitValue::Dollars(0.5))
    );
    assert_eq!(
        parse(LimitKey::MaxCost, RawLimit::Integer(2)),
        Ok(LimitValue::Dollars(2.0))
    );
}

#[test]
fn bad_values_say_what_is_accepted() {
    let err = |key: LimitKey, raw| key.parse(raw).unwrap_err();
    assert!(err(LimitKey::Memory, RawLimit::Text("lots")).contains("512M"));
    assert!(err(LimitKey::Timeout, RawLimit::Text("soon")).contains("15m"));
    assert!(err(LimitKey::Pids, RawLimit::Integer(0)).contains("1 or more"));
    assert!(err(LimitKey::Pids, RawLimit::Integer(-3)).contains("whole number"));
    assert!(err(LimitKey::MaxTurns, RawLimit::Float(2.5)).contains("whole number"));
    assert!(err(LimitKey::MaxTurns, RawLimit::Integer(1 << 40)).contains("whole number"));
    assert!(err(LimitKey::MaxCost, RawLimit::Float(-1.0)).contains("dollars"));
    assert!(err(LimitKey::MaxCost, RawLimit::Text("NaN")).contains("dollars"));
}

#[test]
fn a_set_writes_only_its_keys_and_reads_back_as_written() {
    let mut set = LimitSet::default();
    set.set(LimitKey::Timeout, LimitValue::Ms(5_000));
    set.set(LimitKey::ToolPids, LimitValue::Count(8));
    set.set(LimitKey::MaxTurns, LimitValue::Count(3));
    set.set(LimitKey::MaxCost, LimitValue::Dollars(1.25));
    set.set(LimitKey::MaxDepth, LimitValue::Count(2));
    let (mut limits, mut budget, mut depth) = (Limits::default(), Budget::default(), 1);
    set.apply(&mut limits, &mut budget, &mut depth);
    assert_eq!(limits.wall_timeout_ms, 5_000);
    assert_eq!(limits.tool_pids, 8);
    assert_eq!(limits.memory_bytes, Limits::default().memory_bytes);
    assert_eq!(budget.max_turns, 3);
    assert_eq!(budget.max_cost, Some(1.25));
    assert_eq!(depth, 2);
    for (key, value) in set.iter() {
        assert_eq!(
            key.value_in(&limits, &budget, depth),
            Some(value),
            "{key:?}"
        );
    }
    assert_eq!(LimitValue::Ms(900_000).to_string(), "15m");
    assert_eq!(LimitValue::Bytes(2 << 30).to_string(), "2G");
}

#[test]
fn an_unknown_json_limit_lists_the_limits_as_the_schemas_spell_them() {
    let err = LimitSet::from_json([("maxTurn".to_owned(), serde_json::json!(3))]).unwrap_err();
    assert!(err.starts_with("limits.maxTurn: unknown limit; "), "{err}");
    for key in LimitKey::ALL {
        assert!(err.contains(key.agent_key()), "{err}");
    }
    assert!(
        !err.contains("max_turns") && !err.contains("tool_memory"),
        "{err}"
    );
}
