//! The server's layering, checked on its source (issue #42, ARCHITECTURE.md): its
//! top-level modules import each other without a cycle, and the two doors share only the
//! protocol-neutral layer — RESP imports nothing of HTTP (`routes`, `input`), HTTP
//! nothing of RESP. A `use crate::…` added against these rules fails here, naming it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    crate::support::files_under(dir, "rs", out);
}

/// The code of a file without its tests and comments.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("read file");
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules `text` names through `crate::`.
fn crate_refs(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.insert(name);
        }
    }
    out
}

/// Each top-level module of the server and the top-level modules it imports.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let module_of = |p: &Path| -> Option<String> {
        let rel = p.strip_prefix(&src).ok()?;
        let first = rel.components().next()?.as_os_str().to_str()?.to_owned();
        match first.strip_suffix(".rs") {
            Some("lib") => None,
            Some(m) => Some(m.to_owned()),
            None => Some(first),
        }
    };
    let mut modules: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut refs: Vec<(String, BTreeSet<String>)> = Vec::new();
    for f in &files {
        if let Some(m) = module_of(f) {
            modules.entry(m.clone()).or_default();
            refs.push((m, crate_refs(&code(f))));
        }
    }
    for (m, names) in refs {
        let deps: BTreeSet<String> = names
            .into_iter()
            .filter(|n| *n != m && modules.contains_key(n))
            .collect();
        modules.get_mut(&m).expect("known").extend(deps);
    }
    modules
}

/// A cycle through `start`, if any: the path back to it.
fn cycle_from(g: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_owned(), vec![start.to_owned()])];
    let mut seen = BTreeSet::new();
    while let Some((at, path)) = stack.pop() {
        for next in &g[&at] {
            if next == start {
                let mut cycle = path.clone();
                cycle.push(start.to_owned());
                return Some(cycle);
            }
            if seen.insert(next.clone()) {
                let mut p = path.clone();
                p.push(next.clone());
                stack.push((next.clone(), p));
            }
        }
    }
    None
}

#[test]
fn the_servers_modules_import_each_other_without_a_cycle() {
    let g = graph();
    assert!(g.len() > 10, "the modules were found: {:?}", g.keys());
    for m in g.keys() {
        if let Some(cycle) = cycle_from(&g, m) {
            panic!("an import cycle: {}", cycle.join(" → "));
        }
    }
}

#[test]
fn the_doors_share_only_the_neutral_layer() {
    let g = graph();
    let resp = &g["resp"];
    for http in ["routes", "input"] {
        assert!(!resp.contains(http), "resp imports crate::{http}");
    }
    for m in ["routes", "input"] {
        assert!(!g[m].contains("resp"), "{m} imports crate::resp");
    }
    assert!(resp.contains("wire"), "resp parses with wire: {resp:?}");
    let wire = &g["wire"];
    for door in ["routes", "input", "resp", "app", "gate"] {
        assert!(!wire.contains(door), "wire imports crate::{door}");
    }
}

/// The files of the doors: HTTP's routes and extractors, the RESP door.
fn door_files() -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![src.join("input.rs"), src.join("app.rs")];
    rust_files(&src.join("routes"), &mut files);
    rust_files(&src.join("resp"), &mut files);
    files
}

#[test]
fn no_door_holds_the_bare_service() {
    // A door reaches the service only through the gate, which runs the access rules
    // first: no route or RESP command names the `Leaderboard` trait (the gate keeps it
    // private and offers no accessor, so the compiler holds the rest).
    let files = door_files();
    assert!(
        files.len() > 20,
        "the doors' files were found: {}",
        files.len()
    );
    for f in files {
        let text = code(&f);
        assert!(
            !text.contains("Leaderboard"),
            "{} names the service trait: a door goes through the gate",
            f.display()
        );
    }
}

/// The module path of a source file of a crate whose `src` is `src` (`a/b.rs` and
/// `a/b/mod.rs` are `a::b`; `lib.rs`, `main.rs` the root, "").
fn module_path(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file");
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_owned());
    }
    parts.join("::")
}

/// The module paths `text` (the code of module `at`) names through `crate::` and
/// `super::`, as far as each path goes (the caller keeps the longest that is a module).
fn named_paths(text: &str, at: &str) -> Vec<Vec<String>> {
    let ident = |s: &str| -> Vec<String> {
        s.split("::")
            .map(|p| {
                p.chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
            .take_while(|p| !p.is_empty())
            .collect()
    };
    let mut out = Vec::new();
    for (i, _) in text.match_indices("crate::") {
        if text[..i].ends_with('$')
            || text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        out.push(ident(&text[i + "crate::".len()..]));
    }
    for (i, _) in text.match_indices("super::") {
        if text[..i].ends_with("super::") {
            continue; // counted from the first `super::` of the chain
        }
        let mut base: Vec<String> = if at.is_empty() {
            Vec::new()
        } else {
            at.split("::").map(str::to_owned).collect()
        };
        let mut rest = &text[i..];
        while let Some(r) = rest.strip_prefix("super::") {
            base.pop();
            rest = r;
        }
        base.extend(ident(rest));
        out.push(base);
    }
    out
}

#[test]
fn no_source_file_imports_one_that_imports_it_back() {
    // In every production crate, files import each other without a circle: the parts a
    // whole is made of never import the whole, and steps two modules share live in a
    // module of their own (issue #60).
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut checked = 0;
    for krate in [
        "photofinish-core",
        "photofinish-store",
        "photofinish-redis",
        "photofinish-server",
        "photofinish",
    ] {
        let src = root.join(krate).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let modules: BTreeMap<String, PathBuf> = files
            .iter()
            .map(|f| (module_path(&src, f), f.clone()))
            .collect();
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (m, f) in &modules {
            let deps = g.entry(m.clone()).or_default();
            for mut path in named_paths(&code(f), m) {
                while !path.is_empty() && !modules.contains_key(&path.join("::")) {
                    path.pop();
                }
                let target = path.join("::");
                // A module naming its own item, or the crate root's re-exports, is no edge.
                if !path.is_empty() && target != *m {
                    deps.insert(target);
                }
            }
        }
        for m in g.keys() {
            if let Some(cycle) = cycle_from(&g, m) {
                panic!("{krate}: an import circle: {}", cycle.join(" → "));
            }
        }
        checked += g.len();
    }
    assert!(checked > 150, "the crates' files were found: {checked}");
}

#[test]
fn a_route_documents_its_answers_and_its_operations_refusals_only() {
    // A route's `#[utoipa::path]` lists its successes and names its operation's refusals
    // (`Refusals<Op>`, from the operation's `Refuses::REFUSALS`); the refusals every
    // request may meet (400, 401/403/429, 413, 503) the document adds itself. So no
    // route writes an error status by hand, where it could disagree with its operation.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/routes");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut routes = 0;
    for f in files {
        let text = code(&f);
        routes += text.matches("#[utoipa::path(").count();
        for (i, _) in text.match_indices("(status = ") {
            let status = &text[i + "(status = ".len()..];
            assert!(
                status.starts_with('2'),
                "{} writes an error status by hand: {}",
                f.display(),
                &status[..status.len().min(40)]
            );
        }
    }
    assert!(routes > 30, "the routes were found: {routes}");
}
