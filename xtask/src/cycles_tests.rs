use pretty_assertions::assert_eq;

use super::*;

/// Writes `files` (relative path, text) under a fresh directory and loads
/// the target rooted at its `lib.rs`.
fn graph_of(files: &[(&str, &str)]) -> (tempfile::TempDir, ModuleGraph) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    let graph = ModuleGraph::load(&dir.path().join("lib.rs")).unwrap();
    (dir, graph)
}

/// Module paths (`run::watch`) of a cycle.
fn names(graph: &ModuleGraph, cycle: &BTreeSet<usize>) -> Vec<String> {
    cycle
        .iter()
        .map(|&m| graph.modules[m].path.join("::"))
        .collect()
}

fn cycles_of(files: &[(&str, &str)]) -> Vec<Vec<String>> {
    let (_dir, graph) = graph_of(files);
    graph.cycles().iter().map(|c| names(&graph, c)).collect()
}

#[test]
fn two_modules_that_import_each_other_are_a_cycle() {
    let found = cycles_of(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "use crate::b::B;\npub struct A(B);\n"),
        (
            "b.rs",
            "pub struct B;\npub fn keep(a: super::a::A) -> super::a::A { a }\n",
        ),
    ]);
    assert_eq!(found, vec![vec!["a".to_owned(), "b".to_owned()]]);
}

#[test]
fn imports_one_way_are_no_cycle() {
    let found = cycles_of(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "use crate::b::B;\npub struct A(B);\n"),
        ("b.rs", "pub struct B;\n"),
    ]);
    assert_eq!(found, Vec::<Vec<String>>::new());
}

#[test]
fn a_cycle_through_a_reexport_and_a_nested_module_is_found() {
    // run/child.rs -> run/context.rs -> crate::run::Supervisor, which
    // run/mod.rs re-exports from run/supervisor.rs -> run/child.rs.
    let found = cycles_of(&[
        ("lib.rs", "pub mod run;\n"),
        (
            "run/mod.rs",
            "mod child;\nmod context;\nmod supervisor;\npub use supervisor::Supervisor;\n",
        ),
        (
            "run/child.rs",
            "use super::context::Ctx;\npub fn go(_: Ctx) {}\n",
        ),
        (
            "run/context.rs",
            "pub struct Ctx(pub crate::run::Supervisor);\n",
        ),
        (
            "run/supervisor.rs",
            "pub struct Supervisor;\npub fn start(ctx: super::context::Ctx) { super::child::go(ctx) }\n",
        ),
    ]);
    assert_eq!(
        found,
        vec![vec![
            "run::child".to_owned(),
            "run::context".to_owned(),
            "run::supervisor".to_owned()
        ]]
    );
}

#[test]
fn a_parent_naming_its_children_and_test_modules_are_not_edges() {
    let found = cycles_of(&[
        (
            "lib.rs",
            "mod a;\npub use a::A;\npub fn root() {}\n#[cfg(test)]\n#[path = \"lib_tests.rs\"]\nmod tests;\n",
        ),
        (
            "a.rs",
            "pub struct A;\nfn f() { crate::root() }\n#[cfg(test)]\n#[path = \"a_tests.rs\"]\nmod tests;\n",
        ),
        ("a_tests.rs", "use crate::b::B;\n"),
        ("lib_tests.rs", "use crate::a::A;\n"),
    ]);
    assert_eq!(found, Vec::<Vec<String>>::new());
}

#[test]
fn a_path_attribute_and_a_mod_rs_child_are_followed() {
    let (_dir, graph) = graph_of(&[
        ("lib.rs", "mod a;\n#[path = \"other_name.rs\"]\nmod b;\n"),
        ("a/mod.rs", "mod inner;\n"),
        ("a/inner.rs", "use crate::b::B;\n"),
        ("other_name.rs", "pub struct B;\nuse crate::a::inner;\n"),
    ]);
    let modules: Vec<String> = graph.modules.iter().map(|m| m.path.join("::")).collect();
    assert_eq!(modules, vec!["", "a", "a::inner", "b"]);
    assert_eq!(
        graph
            .cycles()
            .iter()
            .map(|c| names(&graph, c))
            .collect::<Vec<_>>(),
        vec![vec!["a::inner".to_owned(), "b".to_owned()]]
    );
}

#[test]
fn a_missing_module_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lib.rs"), "mod gone;\n").unwrap();
    let err = ModuleGraph::load(&dir.path().join("lib.rs")).unwrap_err();
    assert!(format!("{err:#}").contains("mod gone"), "{err:#}");
}

#[test]
fn top_level_modules_that_reach_each_other_through_their_files_are_a_knot() {
    let (_dir, graph) = graph_of(&[
        ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
        ("a/mod.rs", "mod x;\nmod w;\n"),
        ("a/x.rs", "use crate::b::y::Y;\npub struct X(Y);\n"),
        ("a/w.rs", "pub struct W;\n"),
        ("b/mod.rs", "pub mod y;\nmod z;\n"),
        ("b/y.rs", "pub struct Y;\n"),
        ("b/z.rs", "use crate::a::w::W;\npub struct Z(W);\n"),
        ("c.rs", "use crate::b::y::Y;\npub struct C(Y);\n"),
    ]);
    // No file-level cycle: x -> y, z -> w.
    assert_eq!(graph.cycles(), Vec::<BTreeSet<usize>>::new());
    let knots = graph.top_level_cycles();
    assert_eq!(knots.len(), 1, "{knots:?}");
    let mut edges: Vec<(String, String)> = knots[0]
        .iter()
        .map(|(a, b, _, _)| (a.clone(), b.clone()))
        .collect();
    edges.sort();
    assert_eq!(
        edges,
        vec![
            ("a".to_owned(), "b".to_owned()),
            ("b".to_owned(), "a".to_owned())
        ]
    );
    // The evidence names the files that make each edge.
    let files: Vec<String> = knots[0]
        .iter()
        .map(|(_, _, from, _)| graph.modules[*from].path.join("::"))
        .collect();
    assert!(files.contains(&"a::x".to_owned()) && files.contains(&"b::z".to_owned()));
}
