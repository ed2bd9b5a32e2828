//! Drift guard: each published schema in `<repo>/../shared/schemas/` must
//! have a byte-identical copy in `<repo>/schemas/` when that directory
//! exists (it does beside a CI clone; it may not elsewhere). `schemas/` may
//! hold the project's own schemas besides them.

use std::collections::BTreeMap;
use std::path::Path;

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
    // schemas/ also holds the project's own (serve's request and message
    // schemas); every published one must be there unchanged.
    let missing: Vec<&String> = published
        .keys()
        .filter(|name| !vendored.contains_key(*name))
        .collect();
    assert!(
        missing.is_empty(),
        "published schemas missing from schemas/: {missing:?}; copy shared/schemas/*.json into schemas/"
    );
    for (name, bytes) in &published {
        assert!(
            vendored.get(name) == Some(bytes),
            "schemas/{name} differs from shared/schemas/{name}; copy the published one over"
        );
    }
}
