//! The workspace's sizes, checked on its source (issue #42, ARCHITECTURE.md): no
//! production file over 600 lines before its tests, and no function over 70 lines, so each
//! reads at once. A file or function that grows past them fails here, naming it; split it
//! by its seams (a module per concern, a named helper per step).

use std::path::{Path, PathBuf};

use crate::support::files_under;

/// Lines a production file may have before its `#[cfg(test)]` module.
const MAX_FILE_LINES: usize = 600;
/// Lines a function may have, its signature and closing brace included.
const MAX_FUNCTION_LINES: usize = 70;

/// Every `.rs` file of every crate's `src/`.
fn sources() -> Vec<PathBuf> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&crates).expect("read crates") {
        let src = entry.expect("entry").path().join("src");
        if src.is_dir() {
            files_under(&src, "rs", &mut out);
        }
    }
    out.sort();
    out
}

/// A file's lines before its tests.
fn production_lines(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("read file");
    text.lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .map(str::to_owned)
        .collect()
}

/// Each function with a body: its name, first line (1-based) and length in lines.
fn functions(lines: &[String]) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let Some(at) = trimmed.find("fn ") else {
            continue;
        };
        let before = &trimmed[..at];
        let is_fn = before
            .split_whitespace()
            .all(|w| w.starts_with("pub") || matches!(w, "async" | "const" | "unsafe"));
        if !is_fn {
            continue;
        }
        let name: String = trimmed[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // A declaration without a body (a trait's) ends its signature with `;`.
        let signature_end = lines[i..]
            .iter()
            .position(|l| l.trim_end().ends_with('{') || l.trim_end().ends_with(';'));
        let Some(end) = signature_end else { continue };
        if lines[i + end].trim_end().ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        let last = lines[i + 1..]
            .iter()
            .position(|l| l.starts_with(&close) && !l.starts_with(&format!("{indent}}} else")))
            .map_or(lines.len() - 1, |p| i + 1 + p);
        out.push((name, i + 1, last - i + 1));
    }
    out
}

#[test]
fn no_production_file_or_function_is_too_long() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut long = Vec::new();
    for path in sources() {
        let lines = production_lines(&path);
        let name = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .display()
            .to_string();
        if lines.len() > MAX_FILE_LINES {
            long.push(format!("{name}: {} lines before its tests", lines.len()));
        }
        for (f, at, len) in functions(&lines) {
            if len > MAX_FUNCTION_LINES {
                long.push(format!("{name}:{at}: fn {f} is {len} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "over {MAX_FILE_LINES} lines a file or {MAX_FUNCTION_LINES} a function:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_size_check_sees_a_long_function() {
    let mut lines = vec!["pub fn long() {".to_owned()];
    lines.extend((0..80).map(|i| format!("    let x{i} = {i};")));
    lines.push("}".to_owned());
    lines.push("fn declared(x: u8);".to_owned());
    lines.push("    async fn short() {".to_owned());
    lines.push("    }".to_owned());
    let found = functions(&lines);
    assert_eq!(
        found,
        vec![("long".to_owned(), 1, 82), ("short".to_owned(), 84, 2)]
    );
}

/// Most lines of Lua in every crate together (docs/SPEC.md §12, issue #60): what Lua
/// remains is log plumbing — append, publish and trim, a lease — and no board rule, so it
/// stays this small.
const MAX_LUA_LINES: usize = 120;

/// The Lua scripts the crates carry stay log plumbing: at most [`MAX_LUA_LINES`] lines in
/// all (each script's keys and arguments are documented where Rust calls it).
#[test]
fn the_lua_stays_log_plumbing() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut scripts = Vec::new();
    files_under(&crates, "lua", &mut scripts);
    let lines: usize = scripts
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("read").lines().count())
        .sum();
    assert!(
        !scripts.is_empty(),
        "no Lua found under {}",
        crates.display()
    );
    assert!(
        lines <= MAX_LUA_LINES,
        "{lines} lines of Lua in {scripts:?}, over {MAX_LUA_LINES}"
    );
}

/// ARCHITECTURE.md is a map a newcomer reads in one sitting (issue #60): what a module
/// does is said in the module's `//!` paragraph, not repeated there at length.
const MAX_ARCHITECTURE_LINES: usize = 400;

#[test]
fn the_architecture_stays_a_map() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ARCHITECTURE.md");
    let lines = std::fs::read_to_string(&path)
        .expect("read ARCHITECTURE.md")
        .lines()
        .count();
    assert!(lines > 50, "{} has {lines} lines", path.display());
    assert!(
        lines <= MAX_ARCHITECTURE_LINES,
        "ARCHITECTURE.md has {lines} lines, over {MAX_ARCHITECTURE_LINES}"
    );
}
