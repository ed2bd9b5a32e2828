//! Loading the vendored JSON Schemas (`<repo>/schemas/`) and reporting
//! validation errors readably; shared by the result and session tests.

use std::path::{Path, PathBuf};

use jsonschema::Validator;
use serde_json::Value;

/// `<repo>/schemas`, where the vendored copies of the published schemas live.
pub fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas")
}

/// `<repo>/schemas/<name>` as JSON.
pub fn load_schema(name: &str) -> Value {
    let path = schemas_dir().join(name);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
}

/// A compiled validator for `<repo>/schemas/<name>`.
pub fn validator(name: &str) -> Validator {
    jsonschema::validator_for(&load_schema(name)).expect("schema compiles")
}

/// Every validation error, with where in the instance it is.
pub fn errors(v: &Validator, instance: &Value) -> Vec<String> {
    v.iter_errors(instance)
        .map(|e| format!("{e} (at {})", e.instance_path()))
        .collect()
}

/// Fails with every error listed, and the instance, when `instance` is invalid.
pub fn assert_valid(v: &Validator, instance: &Value, what: &str) {
    let errors = errors(v, instance);
    assert!(errors.is_empty(), "{what}: {errors:#?}\n{instance:#}");
}
