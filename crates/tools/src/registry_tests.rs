use std::sync::Arc;

use pretty_assertions::assert_eq;

use super::*;
use crate::tool::{ToolContext, ToolFuture, ToolOutput};

struct Named(&'static str);

impl Tool for Named {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "test tool"
    }
    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({"type": "object"})
    }
    fn call<'a>(&'a self, _arguments: serde_json::Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async { Ok(ToolOutput::text(self.0)) })
    }
}

fn registry(names: &[&'static str]) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for name in names {
        registry.register(Arc::new(Named(name))).unwrap();
    }
    registry
}

#[test]
fn subset_keeps_only_the_named_tools() {
    let all = registry(&["bash_read", "bash_find", "search_web"]);
    let subset = all
        .subset(&[
            "search_web".to_owned(),
            "bash_read".to_owned(),
            "bash_read".to_owned(),
        ])
        .unwrap();
    assert_eq!(subset.names(), vec!["bash_read", "search_web"]);
    assert!(subset.get("bash_find").is_none());
}

#[test]
fn subset_with_unknown_names_lists_them_and_the_known_tools() {
    let all = registry(&["bash_read", "bash_find"]);
    let err = all
        .subset(&[
            "bash_read".to_owned(),
            "rm_rf".to_owned(),
            "nope".to_owned(),
        ])
        .unwrap_err();
    assert_eq!(
        err,
        UnknownTools {
            unknown: vec!["rm_rf".to_owned(), "nope".to_owned()],
            known: vec!["bash_find".to_owned(), "bash_read".to_owned()],
        }
    );
    assert_eq!(
        err.to_string(),
        "unknown tools `rm_rf`, `nope`; known tools: `bash_find`, `bash_read`"
    );
}

#[test]
fn an_empty_registry_says_it_knows_no_tools() {
    let err = ToolRegistry::new().subset(&["x".to_owned()]).unwrap_err();
    assert_eq!(err.to_string(), "unknown tool `x`; known tools: (none)");
}

#[test]
fn duplicate_and_reserved_names_are_refused() {
    let mut all = registry(&["bash_read"]);
    assert_eq!(
        all.register(Arc::new(Named("bash_read"))),
        Err(RegisterError::Duplicate("bash_read".to_owned()))
    );
    assert_eq!(
        all.register(Arc::new(Named("report_back"))),
        Err(RegisterError::Reserved("report_back".to_owned()))
    );
}

#[test]
fn builtin_offers_exactly_the_contract_tool_names() {
    let names = ToolRegistry::builtin().names();
    let contract: Vec<String> = subagent_protocol::tool_names::BUILTIN_TOOLS
        .iter()
        .map(|n| (*n).to_owned())
        .collect();
    assert_eq!(names, contract);
}
