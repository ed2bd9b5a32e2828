use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

const PERSON: &str = r#"{
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}}
    },
    "required": ["name", "age"],
    "additionalProperties": false
}"#;

fn violations(schema: &ReportBackSchema, value: serde_json::Value) -> Vec<String> {
    let mut found: Vec<String> = schema
        .validate(&value)
        .expect_err("should be invalid")
        .iter()
        .map(ToString::to_string)
        .collect();
    found.sort();
    found
}

#[test]
fn valid_arguments_pass() {
    let schema = ReportBackSchema::compile(PERSON).unwrap();
    assert_eq!(
        schema.validate(&json!({"name": "Ada", "age": 36, "tags": ["x"]})),
        Ok(())
    );
}

#[test]
fn every_violation_is_listed_with_its_instance_path() {
    let schema = ReportBackSchema::compile(PERSON).unwrap();
    let found = violations(&schema, json!({"name": 7, "age": -1, "tags": ["ok", 3]}));
    assert_eq!(
        found,
        vec![
            "/age: -1 is less than the minimum of 0".to_owned(),
            "/name: 7 is not of type \"string\"".to_owned(),
            "/tags/1: 3 is not of type \"string\"".to_owned(),
        ]
    );
}

#[test]
fn a_missing_property_is_reported_at_the_root() {
    let schema = ReportBackSchema::compile(PERSON).unwrap();
    let found = violations(&schema, json!({"name": "Ada"}));
    assert_eq!(
        found,
        vec!["(root): \"age\" is a required property".to_owned()]
    );
    let listed = describe_violations(&schema.validate(&json!({"name": "Ada"})).unwrap_err());
    assert_eq!(listed, "- (root): \"age\" is a required property");
}

#[test]
fn long_messages_are_clipped() {
    let schema = ReportBackSchema::compile(r#"{"type": "string"}"#).unwrap();
    let big: Vec<String> = (0..500).map(|i| format!("item-{i}")).collect();
    let found = schema.validate(&json!(big)).unwrap_err();
    assert_eq!(found.len(), 1);
    assert!(found[0].message.len() <= MAX_VIOLATION_MESSAGE_BYTES + 4);
    assert!(found[0].message.ends_with(" ..."));
}

#[test]
fn text_that_is_not_json_is_refused_as_not_json() {
    let err = ReportBackSchema::compile("{not json").unwrap_err();
    assert!(matches!(err, SchemaError::NotJson(_)), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("the output schema is not valid JSON: ")
    );
}

#[test]
fn json_that_is_not_a_schema_is_refused_with_the_validator_message() {
    let err = ReportBackSchema::compile(r#"{"type": 5}"#).unwrap_err();
    let SchemaError::InvalidSchema(message) = &err else {
        panic!("expected InvalidSchema, got {err:?}");
    };
    assert!(message.contains('5'), "{message}");
}

#[test]
fn a_remote_ref_is_refused_without_touching_the_network() {
    let err =
        ReportBackSchema::compile(r#"{"$ref": "https://127.0.0.1:9/schema.json"}"#).unwrap_err();
    assert!(matches!(err, SchemaError::InvalidSchema(_)), "{err:?}");
}
