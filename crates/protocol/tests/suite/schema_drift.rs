//! Drift guard: the vendored schemas in `<repo>/schemas/` must be
//! byte-identical to the published ones in `<repo>/../shared/schemas/` when
//! that directory exists (it does beside a CI clone; it may not elsewhere).

use std::collections::BTreeMap;
use std::path::Path;

use pretty_assertions::assert_eq;

use super::schemas::schemas_dir;

/// Every `*.json` file of `dir`, by name.
fn json_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("list {}: {e}", dir.display()))
        .map(|entry| entry.expect("dir entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .map(|path| {
            let name = path
                .file_name()
                .expect("file name")
                .to_string_lossy()
                .into_owned();
            let bytes =
                std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
            (name, bytes)
        })
        .collect()
}

#[test]
fn vendored_schemas_are_present() {
    let vendored = json_files(&schemas_dir());
    assert!(
        vendored.contains_key("result.schema.json"),
        "{:?}",
        vendored.keys()
    );
    assert!(
        vendored.contains_key("session-line.schema.json"),
        "{:?}",
        vendored.keys()
    );
}

#[test]
fn vendored_schemas_match_the_published_ones() {
    let published_dir = schemas_dir().join("../../shared/schemas");
    if !published_dir.is_dir() {
        eprintln!(
            "note: {} not found; drift check skipped (it runs where shared/ sits beside the repository)",
            published_dir.display()
        );
        return;
    }
    let published = json_files(&published_dir);
    let vendored = json_files(&schemas_dir());
    assert_eq!(
        vendored.keys().collect::<Vec<_>>(),
        published.keys().collect::<Vec<_>>(),
        "the same schema files; copy shared/schemas/*.json into schemas/"
    );
    for (name, bytes) in &published {
        assert!(
            vendored.get(name) == Some(bytes),
            "schemas/{name} differs from shared/schemas/{name}; copy the published one over"
        );
    }
}
