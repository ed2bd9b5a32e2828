//! One target's module files and which of them each one imports from.
//!
//! Walks `mod` declarations from the root file the way rustc finds them
//! (`name.rs`, `name/mod.rs`, `#[path]`), skipping `#[cfg(test)]` modules;
//! collects every path written in `use` items and in code (not inside macro
//! invocations: their tokens are not parsed) and every `pub use`
//! re-export; then maps each path to the module file that defines what it
//! names. Paths that name nothing in this target (other crates, local
//! items, `std`) are dropped.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use syn::visit::Visit;

use super::Index;

/// Re-exports followed before giving up (a `pub use` of a `pub use` ...).
const MAX_REEXPORT_HOPS: usize = 8;

/// A module that has a file of its own.
#[derive(Debug)]
pub struct Module {
    /// `["run", "watch"]` for `crate::run::watch`; empty for the root.
    pub path: Vec<String>,
    pub file: PathBuf,
}

/// The module files of one target and, per file, the files it imports from.
#[derive(Debug)]
pub struct ModuleGraph {
    pub modules: Vec<Module>,
    pub edges: Vec<BTreeSet<usize>>,
}

/// A path as written, and the module (file or inline) it was written in.
type Written = (Vec<String>, Vec<String>);

/// What one module file says.
#[derive(Debug, Default)]
struct Collected {
    /// Every path written, with its scope.
    paths: Vec<Written>,
    /// `pub use` leaves: (scope, the name it is known by, the path).
    reexports: Vec<(Vec<String>, String, Vec<String>)>,
    /// `mod name;` declarations: (scope, name, `#[path]`).
    declared: Vec<(Vec<String>, String, Option<String>)>,
    /// Inline `mod name { .. }` scopes.
    inline: Vec<Vec<String>>,
}

impl ModuleGraph {
    /// Reads the target whose root file is `root`.
    pub fn load(root: &Path) -> Result<Self> {
        let mut modules = Vec::new();
        let mut collected = Vec::new();
        let mut owner = Index::new();
        load_file(
            root,
            Vec::new(),
            true,
            &mut modules,
            &mut collected,
            &mut owner,
        )?;
        let reexports: HashMap<&[String], HashMap<&str, &[String]>> = collected
            .iter()
            .flat_map(|c| c.reexports.iter())
            .fold(HashMap::new(), |mut map, (scope, name, path)| {
                map.entry(scope.as_slice())
                    .or_default()
                    .insert(name.as_str(), path.as_slice());
                map
            });
        let resolver = Resolver {
            owner: &owner,
            reexports: &reexports,
        };
        let mut edges = vec![BTreeSet::new(); modules.len()];
        for (from, c) in collected.iter().enumerate() {
            for (scope, path) in &c.paths {
                let Some(to) = resolver.target(scope, path, 0) else {
                    continue;
                };
                let inside = modules[to].path.starts_with(&modules[from].path);
                if to != from && !inside {
                    edges[from].insert(to);
                }
            }
        }
        Ok(Self { modules, edges })
    }
}

/// Reads `file` as the module `path` and the module files it declares.
fn load_file(
    file: &Path,
    path: Vec<String>,
    mod_rs: bool,
    modules: &mut Vec<Module>,
    collected: &mut Vec<Collected>,
    owner: &mut Index,
) -> Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let ast = syn::parse_file(&text).with_context(|| format!("parsing {}", file.display()))?;
    let index = modules.len();
    owner.insert(path.clone(), index);
    modules.push(Module {
        path: path.clone(),
        file: file.to_owned(),
    });
    let mut c = Collector {
        scope: path.clone(),
        out: Collected::default(),
    };
    c.visit_file(&ast);
    for scope in &c.out.inline {
        owner.insert(scope.clone(), index);
    }
    let here = file.parent().unwrap_or(Path::new("."));
    // A non-mod-rs file `a/b.rs` keeps its children in `a/b/`.
    let base = if mod_rs {
        here.to_owned()
    } else {
        here.join(file.file_stem().unwrap_or_default())
    };
    let declared = std::mem::take(&mut c.out.declared);
    collected.push(c.out);
    for (scope, name, attr) in declared {
        let inline_dirs: PathBuf = scope[path.len()..].iter().collect();
        let (child, child_mod_rs) = match attr {
            Some(p) => {
                let f = here.join(inline_dirs).join(p);
                let is_mod_rs = f.file_name().is_some_and(|n| n == "mod.rs");
                (f, is_mod_rs)
            }
            None => {
                let dir = base.join(inline_dirs);
                let flat = dir.join(format!("{name}.rs"));
                if flat.exists() {
                    (flat, false)
                } else {
                    (dir.join(&name).join("mod.rs"), true)
                }
            }
        };
        if !child.exists() {
            bail!(
                "{} declares `mod {name}` but neither its file nor a `#[path]` was found ({})",
                file.display(),
                child.display()
            );
        }
        let mut child_path = scope.clone();
        child_path.push(name);
        load_file(&child, child_path, child_mod_rs, modules, collected, owner)?;
    }
    Ok(())
}

/// Turns written paths into the module files they name.
struct Resolver<'a> {
    owner: &'a Index,
    reexports: &'a HashMap<&'a [String], HashMap<&'a str, &'a [String]>>,
}

impl Resolver<'_> {
    /// The absolute module path `path` names from `scope`, when it starts
    /// inside this target.
    fn absolute(&self, scope: &[String], path: &[String]) -> Option<Vec<String>> {
        let first = path.first()?;
        match first.as_str() {
            "crate" => Some(path[1..].to_vec()),
            "self" => Some([scope, &path[1..]].concat()),
            "super" => {
                let ups = path.iter().take_while(|s| *s == "super").count();
                let keep = scope.len().checked_sub(ups)?;
                Some([&scope[..keep], &path[ups..]].concat())
            }
            // A child module of the scope (2018 uniform paths).
            _ => {
                let child = [scope, std::slice::from_ref(first)].concat();
                self.owner
                    .contains_key(&child)
                    .then(|| [scope, path].concat())
            }
        }
    }

    /// The module file that defines what `path` (written in `scope`) names.
    fn target(&self, scope: &[String], path: &[String], hops: usize) -> Option<usize> {
        let absolute = self.absolute(scope, path)?;
        let known = (0..=absolute.len())
            .rev()
            .find(|&n| self.owner.contains_key(&absolute[..n]))?;
        let (module, rest) = absolute.split_at(known);
        if let Some(name) = rest.first()
            && hops < MAX_REEXPORT_HOPS
            && let Some(to) = self
                .reexports
                .get(module)
                .and_then(|names| names.get(name.as_str()))
        {
            let followed = [to, &rest[1..]].concat();
            if let Some(found) = self.target(module, &followed, hops + 1) {
                return Some(found);
            }
        }
        self.owner.get(module).copied()
    }
}

/// Collects paths, re-exports and module declarations of one file.
struct Collector {
    scope: Vec<String>,
    out: Collected,
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// Every leaf of a `use` tree: (full path, the name it binds; `None` for a glob).
fn flatten(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) if n.ident == "self" => {
            out.push((prefix.clone(), prefix.last().cloned()));
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            out.push((
                [prefix.as_slice(), std::slice::from_ref(&name)].concat(),
                Some(name),
            ));
        }
        syn::UseTree::Rename(r) => {
            let path = [prefix.as_slice(), &[r.ident.to_string()]].concat();
            out.push((path, Some(r.rename.to_string())));
        }
        syn::UseTree::Glob(_) => out.push((prefix.clone(), None)),
        syn::UseTree::Group(g) => {
            for item in &g.items {
                flatten(item, prefix, out);
            }
        }
    }
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if is_cfg_test(&m.attrs) {
            return;
        }
        let name = m.ident.to_string();
        match &m.content {
            None => self
                .out
                .declared
                .push((self.scope.clone(), name, path_attr(&m.attrs))),
            Some((_, items)) => {
                self.scope.push(name);
                self.out.inline.push(self.scope.clone());
                for item in items {
                    self.visit_item(item);
                }
                self.scope.pop();
            }
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut leaves = Vec::new();
        flatten(&u.tree, &mut Vec::new(), &mut leaves);
        let public = !matches!(u.vis, syn::Visibility::Inherited);
        for (path, name) in leaves {
            if public && let Some(name) = name {
                self.out
                    .reexports
                    .push((self.scope.clone(), name, path.clone()));
            }
            self.out.paths.push((self.scope.clone(), path));
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let path: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.out.paths.push((self.scope.clone(), path));
        syn::visit::visit_path(self, p);
    }
}
