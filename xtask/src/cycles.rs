//! `cargo xtask cycles`: fails when the modules of any crate of the
//! workspace import each other in a cycle, file by file or among a crate's
//! top-level modules (each file counted as the top-level module it lies
//! in: `run/child.rs` is `run`).
//!
//! For every library and binary target `cargo metadata` lists, it walks the
//! module tree from the target's root file ([`modules`]), reads every
//! `crate::`, `super::`, `self::` and child-module path of each module file
//! (in `use` items and in code), maps each path to the module file that
//! defines the item (through `pub use` re-exports), and looks for strongly
//! connected components of that graph.
//!
//! Two kinds of edge are not dependencies and are left out: a module naming
//! its own descendants (a `mod.rs` declaring and re-exporting its children
//! is structure), and anything in test-only modules (`#[cfg(test)] mod`,
//! which covers every sibling `*_tests.rs` file): tests may reach across.
//! Integration tests, benches and examples are not walked.
//!
//! Reads source files only; it never builds or changes anything.

mod modules;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::cmd;

pub use modules::ModuleGraph;

/// Checks every crate of the workspace at `root`.
pub fn run(root: &Path) -> Result<()> {
    let roots = target_roots(root)?;
    let mut found = Vec::new();
    for (name, file) in &roots {
        let graph = ModuleGraph::load(file)
            .with_context(|| format!("reading the modules of {name} ({})", file.display()))?;
        for cycle in graph.cycles() {
            found.push(format!("{name}: {}", describe(&graph, &cycle, root)));
        }
        for cycle in graph.top_level_cycles() {
            found.push(format!(
                "{name}, top-level modules: {}",
                describe_top_level(&graph, &cycle, root)
            ));
        }
    }
    if !found.is_empty() {
        bail!(
            "{} import cycle(s) among modules:\n  {}\nmove the shared type into the lower module, or reach upward through a trait",
            found.len(),
            found.join("\n  ")
        );
    }
    eprintln!(
        "xtask: no import cycle among the modules of {} targets, and no knot among any crate's top-level modules",
        roots.len()
    );
    Ok(())
}

/// `(target name, root file)` of every library and binary target.
fn target_roots(root: &Path) -> Result<Vec<(String, PathBuf)>> {
    let out = cmd::stdout_of(cmd::cargo().current_dir(root).args([
        "metadata",
        "--no-deps",
        "--format-version",
        "1",
    ]))?;
    let meta: serde_json::Value =
        serde_json::from_str(&out).context("reading `cargo metadata` output")?;
    let mut roots = Vec::new();
    for package in meta["packages"].as_array().into_iter().flatten() {
        for target in package["targets"].as_array().into_iter().flatten() {
            let kinds: Vec<&str> = target["kind"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str())
                .collect();
            if !kinds
                .iter()
                .any(|k| matches!(*k, "lib" | "bin" | "proc-macro" | "rlib"))
            {
                continue;
            }
            if let (Some(name), Some(src)) = (target["name"].as_str(), target["src_path"].as_str())
            {
                roots.push((format!("{name} ({})", kinds.join(",")), PathBuf::from(src)));
            }
        }
    }
    Ok(roots)
}

/// One cycle as its files and the imports that close it.
fn describe(graph: &ModuleGraph, cycle: &BTreeSet<usize>, root: &Path) -> String {
    let show = |m: usize| {
        let file = &graph.modules[m].file;
        file.strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string()
    };
    let edges: Vec<String> = cycle
        .iter()
        .flat_map(|&from| {
            graph.edges[from]
                .iter()
                .filter(|to| cycle.contains(to))
                .map(move |&to| (from, to))
        })
        .map(|(from, to)| format!("{} -> {}", show(from), show(to)))
        .collect();
    edges.join(", ")
}

/// One cycle among top-level modules: each edge with the file-level
/// import that makes it.
fn describe_top_level(
    graph: &ModuleGraph,
    cycle: &[(String, String, usize, usize)],
    root: &Path,
) -> String {
    let show = |m: usize| {
        let file = &graph.modules[m].file;
        file.strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string()
    };
    cycle
        .iter()
        .map(|(a, b, from, to)| format!("{a} -> {b} ({} uses {})", show(*from), show(*to)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Strongly connected components of more than one node (Tarjan), each as
/// its set of node indices, in a stable order.
fn strongly_connected(edges: &[BTreeSet<usize>]) -> Vec<BTreeSet<usize>> {
    struct Walk<'e> {
        edges: &'e [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        found: Vec<BTreeSet<usize>>,
    }
    impl Walk<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in self.edges[v].iter() {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut component = BTreeSet::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    component.insert(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
        }
    }
    let n = edges.len();
    let mut walk = Walk {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if walk.index[v].is_none() {
            walk.visit(v);
        }
    }
    let mut found = walk.found;
    found.sort();
    found
}

impl ModuleGraph {
    /// The import cycles among this target's module files.
    pub fn cycles(&self) -> Vec<BTreeSet<usize>> {
        strongly_connected(&self.edges)
    }

    /// The import cycles among this target's top-level modules (`run`,
    /// `session`, ...), each module file counted as the top-level module
    /// it lies in: the knots a file-level check misses, where `a/x.rs`
    /// uses `b/y.rs` and `b/z.rs` uses `a/w.rs`. Each cycle is the
    /// top-level names, with one file-level import per edge as evidence.
    pub fn top_level_cycles(&self) -> Vec<Vec<(String, String, usize, usize)>> {
        let top = |m: usize| self.modules[m].path.first().cloned();
        let names: Vec<String> = self
            .modules
            .iter()
            .filter_map(|m| m.path.first().cloned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let slot = |name: &str| names.iter().position(|n| n == name);
        let mut edges = vec![BTreeSet::new(); names.len()];
        let mut evidence: BTreeMap<(usize, usize), (usize, usize)> = BTreeMap::new();
        for (from, targets) in self.edges.iter().enumerate() {
            let Some(a) = top(from).and_then(|n| slot(&n)) else {
                continue;
            };
            for &to in targets {
                let Some(b) = top(to).and_then(|n| slot(&n)) else {
                    continue;
                };
                if a != b {
                    edges[a].insert(b);
                    evidence.entry((a, b)).or_insert((from, to));
                }
            }
        }
        strongly_connected(&edges)
            .into_iter()
            .map(|cycle| {
                let mut shown = Vec::new();
                for &a in &cycle {
                    for &b in edges[a].iter().filter(|b| cycle.contains(b)) {
                        let (from, to) = evidence[&(a, b)];
                        shown.push((names[a].clone(), names[b].clone(), from, to));
                    }
                }
                shown
            })
            .collect()
    }
}

/// Module path -> index, for the graph builder.
type Index = BTreeMap<Vec<String>, usize>;

#[cfg(test)]
#[path = "cycles_tests.rs"]
mod tests;
