use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

/// What a row expects: the mode, tasks and concurrency read, or a
/// refusal whose message contains the text.
#[derive(Debug)]
enum Want {
    Read(RunMode, &'static [&'static str], Option<usize>),
    Refused(&'static str),
}

fn check(wire: &SpawnWire, table: &[(Value, Want)]) {
    for (params, want) in table {
        let Value::Object(map) = params.clone() else {
            panic!("{params}: a row's params are an object");
        };
        let got = parse_spawn(wire, map);
        match (want, got) {
            (Want::Read(mode, tasks, concurrency), Ok(spawn)) => {
                let tasks: Vec<String> = tasks.iter().map(|t| (*t).to_owned()).collect();
                assert_eq!(
                    (spawn.mode, spawn.tasks, spawn.concurrency),
                    (*mode, tasks, *concurrency),
                    "{params}"
                );
            }
            (Want::Refused(needle), Err(message)) => {
                assert!(message.contains(needle), "{params}: {message}");
            }
            (want, got) => panic!("{params}: wanted {want:?}, got {got:?}"),
        }
    }
}

#[test]
fn the_stdio_wire_reads_tasks_by_mode_and_knows_no_concurrency() {
    use Want::{Read, Refused};
    use subagent_protocol::RunMode::{Chain, Parallel, Single};
    check(
        &STDIO,
        &[
            (json!({"task": "a"}), Read(Single, &["a"], None)),
            (
                json!({"task": "a", "mode": "single"}),
                Read(Single, &["a"], None),
            ),
            (
                json!({"tasks": ["a", "b"]}),
                Read(Parallel, &["a", "b"], None),
            ),
            (
                json!({"tasks": ["a"], "mode": "parallel"}),
                Read(Parallel, &["a"], None),
            ),
            (
                json!({"tasks": ["a", "b"], "mode": "chain"}),
                Read(Chain, &["a", "b"], None),
            ),
            (json!({"resume": "r1"}), Read(Single, &[""], None)),
            (
                json!({"resume": "r1", "task": "more"}),
                Read(Single, &["more"], None),
            ),
            (json!({"task": "a", "tasks": ["b"]}), Refused("not both")),
            (
                json!({"task": "a", "mode": "chain"}),
                Refused("mode chain takes `tasks`"),
            ),
            (
                json!({"task": "a", "mode": "parallel"}),
                Refused("mode parallel takes `tasks`"),
            ),
            (
                json!({"tasks": ["a"], "mode": "single"}),
                Refused("mode single takes `task`"),
            ),
            (json!({"agent": "general"}), Refused("missing task")),
            (json!({"tasks": []}), Refused("`tasks` is empty")),
            (json!({"tasks": ["a", " "]}), Refused("task 2 is empty")),
            (json!({"task": "  "}), Refused("task 1 is empty")),
            (
                json!({"task": "a", "mode": "sideways"}),
                Refused("sideways"),
            ),
            (
                json!({"task": "a", "mode": "management"}),
                Refused("management"),
            ),
            (
                json!({"resume": "r1", "tasks": ["a"]}),
                Refused("`resume` continues one run"),
            ),
            (
                json!({"resume": "r1", "mode": "chain"}),
                Refused("`resume` continues one run"),
            ),
            (
                json!({"tasks": ["a", "b"], "concurrency": 2}),
                Refused("unknown field `concurrency`"),
            ),
            (
                json!({"task": "a", "bakground": true}),
                Refused("invalid spawn params: unknown field `bakground`"),
            ),
            (
                json!({"task": "a", "outputSchema": "x"}),
                Refused("`outputSchema` must be a JSON Schema object"),
            ),
            (
                json!({"task": "a", "limits": {"turns": 3}}),
                Refused("limits.turns"),
            ),
        ],
    );
}

#[test]
fn the_mcp_wire_joins_task_and_tasks_and_takes_a_concurrency() {
    use Want::{Read, Refused};
    use subagent_protocol::RunMode::{Chain, Parallel, Single};
    // Not asked: the server lowers the per-call default to its limit.
    let default = None;
    check(
        &MCP,
        &[
            (json!({"task": "a"}), Read(Single, &["a"], default)),
            (json!({"tasks": ["a"]}), Read(Single, &["a"], default)),
            (
                json!({"task": "a", "tasks": ["b"], "mode": "chain"}),
                Read(Chain, &["a", "b"], default),
            ),
            (
                json!({"task": "a", "mode": "parallel"}),
                Read(Parallel, &["a"], default),
            ),
            (
                json!({"tasks": ["a", " ", "b"], "mode": "parallel", "concurrency": 2}),
                Read(Parallel, &["a", "b"], Some(2)),
            ),
            (
                json!({"tasks": ["a"], "mode": "parallel", "concurrency": null}),
                Read(Parallel, &["a"], default),
            ),
            (json!({"resume": "r1"}), Read(Single, &[""], default)),
            (
                json!({"resume": "r1", "tasks": ["more"]}),
                Read(Single, &["more"], default),
            ),
            (
                json!({"tasks": ["a", "b"]}),
                Refused("2 tasks were given: set mode to parallel or chain"),
            ),
            (json!({}), Refused("no task")),
            (json!({"task": "  "}), Refused("no task")),
            (
                json!({"task": "a", "concurrency": 2}),
                Refused("concurrency applies to mode parallel only"),
            ),
            (
                json!({"tasks": ["a"], "mode": "parallel", "concurrency": "two"}),
                Refused("invalid arguments: concurrency"),
            ),
            (
                json!({"task": "a", "mode": "sideways"}),
                Refused("sideways"),
            ),
            (
                json!({"resume": "r1", "mode": "parallel"}),
                Refused("resume continues one run"),
            ),
            (
                json!({"task": "a", "bogus": 1}),
                Refused("invalid arguments: unknown field `bogus`"),
            ),
            (
                json!({"task": "a", "outputSchema": "x"}),
                Refused("outputSchema"),
            ),
            (
                json!({"task": "a", "limits": {"maxTurnz": 1}}),
                Refused("limits.maxTurnz"),
            ),
        ],
    );
}

#[test]
fn a_spawn_patches_what_it_names_and_plans_its_mode_and_concurrency() {
    let Value::Object(params) = json!({
        "agent": "explorer", "model": "m", "tools": ["bash_read"], "allowNetwork": false,
        "workspace": "sub", "outputSchema": {"type": "object"}, "limits": {"maxTurns": 3},
        "tasks": ["a", "b"], "mode": "parallel", "concurrency": 2
    }) else {
        panic!("an object");
    };
    let spawn = parse_spawn(&MCP, params).unwrap();
    let patch = spawn.patch();
    assert_eq!(patch.agent.as_deref(), Some("explorer"));
    assert_eq!(patch.model.as_deref(), Some("m"));
    assert_eq!(patch.tools, Some(vec!["bash_read".to_owned()]));
    assert_eq!(patch.allow_network, Some(false));
    assert_eq!(patch.workspace, Some(std::path::PathBuf::from("sub")));
    assert_eq!(
        patch.output_schema_json.as_deref(),
        Some(r#"{"type":"object"}"#)
    );
    assert_eq!(patch.limits, spawn.limits);
    assert_eq!(
        patch.task, None,
        "the tasks are the plan's, one request each"
    );
    let provider = subagent_protocol::ProviderSpec::new(
        subagent_protocol::ProviderKind::OpenaiChat,
        "http://127.0.0.1:9/v1",
        "m",
    );
    let request = RunRequest::new("general", "a", provider);
    let plan = spawn.plan(vec![request.clone(), request]);
    assert_eq!(
        (plan.mode, plan.concurrency, plan.requests.len()),
        (RunMode::Parallel, Some(2), 2)
    );
}

#[test]
fn a_stdio_spawn_takes_its_callers_trace_context_and_ignores_a_bad_one() {
    let parse = |params: Value| {
        let Value::Object(map) = params else {
            panic!("params are an object")
        };
        parse_spawn(&STDIO, map)
    };
    let traced = parse(json!({
        "task": "t",
        "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "tracestate": "vendor=x"
    }))
    .unwrap();
    assert_eq!(
        traced.trace_parent.map(|p| p.header()),
        Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".to_owned())
    );
    // Never a refusal: a bad value is ignored (with one warning).
    for bad in [json!("nope"), json!(7), json!(null)] {
        let spawn = parse(json!({"task": "t", "traceparent": bad})).unwrap();
        assert_eq!(spawn.trace_parent, None, "{bad}");
    }
    // MCP carries it in `_meta`, not in the arguments.
    let Value::Object(map) = json!({"task": "t", "traceparent": "x"}) else {
        unreachable!()
    };
    assert!(parse_spawn(&MCP, map).is_err());
}
